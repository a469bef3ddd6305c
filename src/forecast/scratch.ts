// Work space of the training's numerical kernels (issue 21 point 4). Every origin refits
// hundreds of ridge regressions, each building design copies, Gram and eigen matrices of
// up to megabytes that die as it returns; as fresh Float64Arrays they are memory outside
// V8's heap, freed only when a collection finds them dead, so several origins' worth was
// resident at once (the daemon's peak). A kernel takes its temporary arrays from here
// instead: one buffer per named use, grown to the largest size asked and handed out zeroed,
// as a new array would be, so the arithmetic and its results are unchanged to the bit.
// Only for arrays that nothing keeps after the synchronous call that asked for them
// (never across an await: two computations may interleave at their pauses). The
// forecaster gives the buffers back at the end of a computation (releaseScratch).

const buffers = new Map<string, Float64Array>();

/** A zeroed array of `length` from the buffer named `use`; valid until the next call with that name. */
export function scratch(use: string, length: number): Float64Array {
  const kept = buffers.get(use);
  if (kept === undefined || kept.length < length) {
    // A quarter more than asked when it grows again: the rows of a window grow by a day or
    // two per origin while the store fills it, and each growth would leave the old buffer
    // behind as garbage.
    const fresh = new Float64Array(kept === undefined ? length : Math.max(length, Math.ceil(kept.length * 1.25)));
    buffers.set(use, fresh);
    return fresh.subarray(0, length);
  }
  const view = kept.subarray(0, length);
  view.fill(0);
  return view;
}

/** Drops every buffer (the end of a forecast computation: nothing stays resident between refreshes). */
export function releaseScratch(): void {
  buffers.clear();
}
