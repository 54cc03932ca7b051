/** `/signin?next=…` for the page being asked for. */
export function signInPath(next: string): string {
  return next === '/' ? '/signin' : `/signin?next=${encodeURIComponent(next)}`;
}
