import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import Readouts from './Readouts.svelte';
import type { StatsView } from '../lib/types';

const GiB = 2 ** 30;

function readouts(stats: StatsView) {
  const target = document.createElement('div');
  const c = mount(Readouts, { target, props: { stats, running: null } });
  flushSync();
  const text = (k: string) => target.querySelector(`[data-readout="${k}"]`)?.textContent ?? null;
  const title = (k: string) => target.querySelector(`[data-readout="${k}"]`)?.getAttribute('title') ?? null;
  return { text, title, all: () => target.textContent ?? '', close: () => unmount(c) };
}

describe('Readouts: the GPU memory tier', () => {
  it('says where the experts live, the share read from the device and the bus bytes a frame', () => {
    const r = readouts({
      loaded: true,
      message: '',
      total_bytes: 140 * GiB,
      memory: {
        device: 'NVIDIA H200', used_bytes: 21 * GiB, peak_bytes: 21 * GiB, cap_bytes: 22 * GiB,
        experts: { tier: 'experts in host memory', device_bytes: 13.5 * GiB, host_bytes: 16.5 * GiB,
          device_layers: 18, layers: 40, hit_share: 0.45, bus_bytes_per_frame: 553_800_000 },
      },
    });
    expect(r.text('expert-tier')).toContain('experts in host memory: 18 of 40 layers on the device');
    expect(r.text('expert-tier')).toContain('16.5 GiB in host memory');
    expect(r.text('expert-hit-rate')).toBe('45.0%');
    expect(r.text('bus-per-frame')).toMatch(/^5\d\d(\.\d)? MiB$/);
    expect(r.text('expert-cache')).toBeNull();
    r.close();
  });

  it('shows what the expert cache measured', () => {
    const r = readouts({
      loaded: true, message: '', total_bytes: 140 * GiB,
      memory: {
        device: 'NVIDIA H200', used_bytes: 21 * GiB, peak_bytes: 21 * GiB, cap_bytes: 22 * GiB,
        experts: { tier: 'experts in host memory', device_bytes: 13.5 * GiB, host_bytes: 16.5 * GiB,
          device_layers: 18, layers: 40, hit_share: 0.45, bus_bytes_per_frame: 553_800_000,
          cache: { slot_experts: 4352, resident_experts: 4608, total_experts: 10240, hits: 9_300, misses: 700, hit_share: 0.93, promoted_experts: 120,
            evictions: 120, frames: 300, bus_bytes_per_frame: 80_000_000 } },
      },
    });
    expect(r.text('expert-cache')).toBe('93.0% hits · 4608 of 10240 on the device · 120 moved');
    expect(r.text('bus-measured')).toMatch(/^76(\.\d)? MiB$/);
    r.close();
  });

  it('says which memory the voice cache is part of: device, or pinned host under the host tier', () => {
    const memory = { device: 'NVIDIA H200', used_bytes: 21 * GiB, peak_bytes: 21 * GiB, cap_bytes: 22 * GiB, pinned_bytes: 17 * GiB,
      voice_cache_bytes: 169_000_000, voice_cache_cap_bytes: 512 * 2 ** 20, voice_entries: 1 };
    let r = readouts({ loaded: true, message: '', total_bytes: 140 * GiB, memory: { ...memory, voice_cache_in_host: true } });
    expect(r.all()).toContain('Voice cache (part of pinned)');
    expect(r.text('voice-cache')).toMatch(/^161(\.\d)? MiB · 1 voice$/);
    r.close();
    r = readouts({ loaded: true, message: '', total_bytes: 140 * GiB, memory });
    expect(r.all()).toContain('Voice cache (part of used)');
    expect(r.title('voice-cache')).toContain('ready now: no cloned voice');
    r.close();
    r = readouts({ loaded: true, message: '', total_bytes: 140 * GiB, memory, voices_ready: ['Ada', 'Bea'], cast_ready: true });
    expect(r.title('voice-cache')).toContain('ready now: Ada, Bea, the whole script in the cast');
    r.close();
  });

  it('shows the tier alone when every expert is on the device, and nothing for the CPU', () => {
    let r = readouts({
      loaded: true, message: '', total_bytes: 140 * GiB,
      memory: { device: 'NVIDIA H200', used_bytes: 37 * GiB, peak_bytes: 37 * GiB, cap_bytes: 0,
        experts: { tier: 'fits on the device', device_bytes: 30 * GiB, host_bytes: 0, device_layers: 40, layers: 40, hit_share: 1, bus_bytes_per_frame: 0 } },
    });
    expect(r.text('expert-tier')).toBe('fits on the device');
    expect(r.text('expert-hit-rate')).toBeNull();
    expect(r.text('bus-per-frame')).toBeNull();
    r.close();
    r = readouts({ loaded: true, message: '', total_bytes: 0, memory: { device: 'host', used_bytes: GiB, peak_bytes: GiB, cap_bytes: 0 } });
    expect(r.text('expert-tier')).toBeNull();
    r.close();
  });
});
