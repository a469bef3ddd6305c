// One store commit per poll slot across meter sources: each source says when it has handed
// on every sample of its slot (event poll.tick-done); once all have, the slot is committed.
// A source that skips a slot (a late timer) is caught up by its next one, and the recorder
// commits anything left waiting after one poll interval anyway (recorder.recordInTick).

export class TickJoin {
  private readonly finished = new Set<string>();

  constructor(
    private readonly sources: number,
    private readonly commit: () => void,
  ) {}

  done(source: string): void {
    this.finished.add(source);
    if (this.finished.size < this.sources) return;
    this.finished.clear();
    this.commit();
  }
}
