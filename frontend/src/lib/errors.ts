// The text of whatever a service call rejected with, as the user should
// read it: the service's own sentence, without its error-kind prefix, and a
// decoding error (a value the Go type cannot hold) said in our words.

const prefixes = /^(invalid|bad request|error):\s*/i;

// encoding/json: "json: cannot unmarshal number -1 into Go struct field SpeechRequest.seed of type uint64"
const unmarshal = /cannot unmarshal (\w+)(?: (\S+))? into Go (?:struct field \S*?\.?([\w.]+) |value )of type (\*?[\w.[\]]+)/;

function typeWords(goType: string): string {
  if (/^u?int(8|16|32|64)?$/.test(goType)) return goType.startsWith('u') ? 'a whole number, 0 or more' : 'a whole number';
  if (/^float(32|64)$/.test(goType)) return 'a number';
  if (goType === 'string') return 'text';
  if (goType === 'bool') return 'true or false';
  return 'a value of another kind';
}

export function errorText(e: unknown): string {
  let text = e instanceof Error ? e.message : String(e);
  const m = unmarshal.exec(text);
  if (m) {
    const [, kind, value, field, goType] = m;
    const name = field ? field.split('.').pop()!.replace(/_/g, ' ') : 'a value';
    const what = value ?? kind;
    return `${name}: ${what} is not allowed here (it must be ${typeWords(goType)})`;
  }
  while (prefixes.test(text)) text = text.replace(prefixes, '');
  return text;
}
