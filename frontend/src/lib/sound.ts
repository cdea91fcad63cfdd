// Where takes are heard, in words a person knows. The sound card's own
// message (a library's error text) is a detail, shown only on demand.
import type { StudioStatus } from './types';

export function soundSummary(studio: StudioStatus | null, browser: boolean): string {
  if (browser) return 'Audio plays in this browser';
  switch (studio?.audio.state) {
    case 'ready':
      return 'Sound card ready';
    case 'opening':
      return 'Opening the sound card…';
    case 'unavailable':
      return 'No sound card — takes still run; export to listen';
    case 'off':
      return 'Sound output is off — takes still run; export to listen';
    default:
      return '';
  }
}

/** The player's note: where the audio goes, short. */
export function playerOutput(studio: StudioStatus | null, browser: boolean): string {
  if (browser) return 'plays in this browser';
  switch (studio?.audio.state) {
    case 'ready':
      return 'plays through the sound card';
    case 'opening':
      return 'opening the sound card…';
    case 'unavailable':
      return 'no sound card';
    case 'off':
      return 'sound output off';
    default:
      return '';
  }
}
