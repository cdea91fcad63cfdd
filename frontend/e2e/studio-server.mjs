// What the browser e2e tests share about the server they drive: the
// environment that keeps everything it writes under the test's scratch
// folder, and the wait for the studio URL it prints.
import { join } from 'node:path';

/** The environment of a `proscenium serve` whose takes, settings, demo model,
 * exports and Hugging Face cache stay under scratch (data: its XDG_DATA_HOME). */
export function scratchEnv(scratch, data = join(scratch, 'data')) {
  return { ...process.env, XDG_DATA_HOME: data, XDG_CONFIG_HOME: join(scratch, 'config'), XDG_MUSIC_DIR: join(scratch, 'music'), HF_HOME: join(scratch, 'hf'), HF_HUB_CACHE: '' };
}

/** Resolves with the studio URL a spawned `proscenium serve --ui` prints on
 * stdout; rejects if it prints none within the given seconds or exits first. */
export function studioURL(server, seconds) {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server printed no URL in ${seconds} s: ${out}`)), seconds * 1000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/studio UI at (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`server exited (${code}) before printing its URL: ${out}`)));
  });
}
