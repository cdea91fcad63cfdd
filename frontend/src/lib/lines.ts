// A script is lines: a blank line, or a speaker tag <|speaker:N|>, starts a
// new one. Each line has its speaker (its tag's, else the line before's,
// else 0), its takes and a chosen take (kept in the project). After an edit
// the lines are split again and each new line takes over the takes of the
// old line it continues (relink).

export interface ScriptLine {
  /** The line as written, its speaker tag included, trimmed. */
  text: string;
  /** <|speaker:N|>'s N: the line's own tag, else the previous line's. */
  speaker: number;
  /** Whether the line starts with its own speaker tag. */
  tagged: boolean;
}

/** What a project keeps for each line (projects.Line). */
export interface LineState {
  text: string;
  speaker: number;
  takes: number[];
  chosen: number;
  /** The silence after the line in the scene, in seconds; absent: the scene's gap. */
  pause_after_s?: number;
  /** The line's own gain in the scene, in dB; absent: as made. */
  gain_db?: number;
  /** The line's own file name (without extension) in a scene exported a file a line; absent: the scene's. */
  file_name?: string;
}

const tag = /<\|speaker:(\d+)\|>/g;

/** Splits a script into lines (empty ones dropped). */
export function splitLines(script: string): ScriptLine[] {
  const out: ScriptLine[] = [];
  let speaker = 0;
  for (const para of script.split(/\r?\n[ \t]*\r?\n/)) {
    // Cut before every speaker tag.
    const cuts = [0, ...[...para.matchAll(tag)].map((m) => m.index ?? 0), para.length];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const text = para.slice(cuts[i], cuts[i + 1]).trim();
      if (!text) continue;
      const own = /^<\|speaker:(\d+)\|>/.exec(text);
      if (own) speaker = Number(own[1]);
      // A tag with nothing after it says nothing: it only sets the speaker.
      if (own && !text.slice(own[0].length).trim()) continue;
      out.push({ text, speaker, tagged: !!own });
    }
  }
  return out;
}

/**
 * The new lines with the takes of the old lines they continue: first the
 * old line with the same text, then (for a line edited in place) the old
 * line at the same position that nothing else took.
 */
export function relink(old: LineState[], lines: ScriptLine[]): LineState[] {
  const used = new Set<number>();
  const match: (number | undefined)[] = lines.map((l) => {
    const j = old.findIndex((o, k) => !used.has(k) && o.text === l.text);
    if (j >= 0) used.add(j);
    return j >= 0 ? j : undefined;
  });
  lines.forEach((_, i) => {
    if (match[i] === undefined && i < old.length && !used.has(i) && !lines.some((l) => l.text === old[i].text)) {
      match[i] = i;
      used.add(i);
    }
  });
  return lines.map((l, i) => {
    const j = match[i];
    const o = j === undefined ? undefined : old[j];
    const line: LineState = { text: l.text, speaker: l.speaker, takes: [...(o?.takes ?? [])], chosen: o?.chosen ?? 0 };
    if (o?.pause_after_s !== undefined) line.pause_after_s = o.pause_after_s;
    if (o?.gain_db !== undefined) line.gain_db = o.gain_db;
    if (o?.file_name !== undefined) line.file_name = o.file_name;
    return line;
  });
}

/** The line without its speaker tag (what the line says). */
export function spoken(line: ScriptLine | LineState): string {
  return line.text.replace(/^<\|speaker:\d+\|>\s*/, '');
}

/**
 * What to send to speak one line, with the cast: a speaker with a voice
 * speaks the line alone in that voice (no tag: one voice); a speaker
 * without one keeps its tag, so the model's own voices stay distinct.
 */
export function lineRequest(line: ScriptLine | LineState, cast: string[]): { text: string; cast: string[] } {
  const voice = cast[line.speaker] ?? '';
  if (voice) return { text: spoken(line), cast: [voice] };
  return { text: line.speaker > 0 ? `<|speaker:${line.speaker}|>${spoken(line)}` : spoken(line), cast: [] };
}

/** The speakers the script uses, in order of first use. */
export function speakersOf(lines: ScriptLine[]): number[] {
  return [...new Set(lines.map((l) => l.speaker))].sort((a, b) => a - b);
}
