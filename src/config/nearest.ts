// "Did you mean …?" for misspelt settings and environment variables (pure).

/** Edit distance counting an adjacent transposition as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d = new Array<number>(rows * cols);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[(i - 1) * cols + j] + 1, d[i * cols + j - 1] + 1, d[(i - 1) * cols + j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[(i - 2) * cols + j - 2] + 1);
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1];
}

/** The candidate closest to `word` (case-insensitive; the first of equals), or null without candidates. */
export function nearest(word: string, candidates: Iterable<string>): { candidate: string; distance: number } | null {
  let best: { candidate: string; distance: number } | null = null;
  const w = word.toLowerCase();
  for (const candidate of candidates) {
    const distance = editDistance(w, candidate.toLowerCase());
    if (best === null || distance < best.distance) best = { candidate, distance };
  }
  return best;
}

/**
 * The candidate close enough to be a typo of `word`: at most a third of the longer name
 * changed (at least one edit allowed), so `usrname` finds `username` but `bogus` finds nothing.
 */
export function likelyMeant(word: string, candidates: Iterable<string>): string | null {
  const best = nearest(word, candidates);
  if (!best) return null;
  const allowed = Math.max(1, Math.floor(Math.max(word.length, best.candidate.length) / 3));
  return best.distance <= allowed ? best.candidate : null;
}
