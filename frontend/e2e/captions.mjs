// What ffmpeg's own SubRip and WebVTT readers (not the studio's writer)
// read in a captions file: the scene export's captions check.
import { spawnSync } from 'node:child_process';

/** The cues of a .srt or .vtt file as ffmpeg reads them: times in seconds, text. */
export function ffmpegCues(file) {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 'srt', '-'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffmpeg could not read ${file}: ${r.stderr}`);
  const seconds = (h, m, s, ms) => Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000;
  return r.stdout
    .replace(/\r\n/g, '\n')
    .trim()
    .split(/\n\n+/)
    .filter(Boolean)
    .map((block) => {
      const rows = block.split('\n');
      const m = /^(\d+):(\d\d):(\d\d),(\d{3}) --> (\d+):(\d\d):(\d\d),(\d{3})$/.exec(rows[1] ?? '');
      if (!m) throw new Error(`ffmpeg's SubRip has no times in ${JSON.stringify(block)}`);
      return { start: seconds(m[1], m[2], m[3], m[4]), end: seconds(m[5], m[6], m[7], m[8]), text: rows.slice(2).join('\n') };
    });
}
