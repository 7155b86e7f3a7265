/** The fake's time source: real time plus an offset that tests move forward, optionally frozen. */
export class Clock {
  private offsetMs: number;
  private frozenAt: number | null = null;

  /** Starts at real time plus `offsetMs`. */
  constructor(
    offsetMs = 0,
    private readonly realNow: () => number = Date.now,
  ) {
    this.offsetMs = offsetMs;
  }

  /** Current fake time in epoch milliseconds. */
  nowMs(): number {
    return (this.frozenAt ?? this.realNow()) + this.offsetMs;
  }

  /** Current fake time. */
  now(): Date {
    return new Date(this.nowMs());
  }

  /** Moves time forward; callers settle the state afterwards. */
  shift(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("advance needs a finite, non-negative ms");
    this.offsetMs += ms;
  }

  /** Stops real time from flowing (advance still moves it); for deterministic billing tests. */
  freeze(at?: Date): void {
    const now = this.nowMs();
    this.frozenAt = this.realNow();
    if (at) this.offsetMs = at.getTime() - this.frozenAt;
    else this.offsetMs = now - this.frozenAt;
  }

  /** Lets real time flow again from the current fake time. */
  unfreeze(): void {
    const now = this.nowMs();
    this.frozenAt = null;
    this.offsetMs = now - this.realNow();
  }

  /** Whether time is frozen. */
  get frozen(): boolean {
    return this.frozenAt !== null;
  }

  /** The offset to persist so a restart continues at the same fake time relative to real time. */
  get offset(): number {
    return this.frozenAt === null ? this.offsetMs : this.nowMs() - this.realNow();
  }
}
