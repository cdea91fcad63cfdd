// What ffmpeg's ebur128 filter (an implementation of EBU R128 of its own,
// not the studio's) measures in an audio file: the scene export's checks in
// the browser test and the window test.
import { spawnSync } from 'node:child_process';

/** Integrated loudness (LUFS), true peak (dBFS) and duration (s, to 10 ms) of file, by ffmpeg. */
export function ffmpegLoudness(file) {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-nostats', '-i', file, '-filter_complex', 'ebur128=peak=true', '-f', 'null', '-'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffmpeg could not read ${file}: ${r.stderr}`);
  const summary = r.stderr.slice(r.stderr.lastIndexOf('Summary:'));
  const i = /I:\s+(-?[\d.]+) LUFS/.exec(summary);
  const tp = /Peak:\s+(-?[\d.]+) dBFS/.exec(summary);
  if (!i) throw new Error(`no integrated loudness in ffmpeg's summary: ${summary}`);
  const d = /Duration: (\d+):(\d\d):(\d\d\.\d+)/.exec(r.stderr);
  const seconds = d ? Number(d[1]) * 3600 + Number(d[2]) * 60 + Number(d[3]) : NaN;
  return { integrated: Number(i[1]), truePeak: tp ? Number(tp[1]) : NaN, seconds };
}
