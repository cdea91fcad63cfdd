import { describe, expect, it } from 'vitest';
import { errorText } from './errors';

describe('errorText', () => {
  it('drops the error-kind prefix', () => {
    expect(errorText(new Error('invalid: top_p must be in (0, 1]'))).toBe('top_p must be in (0, 1]');
    expect(errorText('no model loaded')).toBe('no model loaded');
  });
  it('says a decoding error in our words', () => {
    expect(errorText(new Error('json: cannot unmarshal number -1 into Go struct field SpeechRequest.seed of type uint64'))).toBe(
      'seed: -1 is not allowed here (it must be a whole number, 0 or more)',
    );
    expect(errorText(new Error('json: cannot unmarshal string into Go struct field Rerun.value of type float64'))).toBe(
      'value: string is not allowed here (it must be a number)',
    );
  });
});
