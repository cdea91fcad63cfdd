/** The text of whatever a service call rejected with. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
