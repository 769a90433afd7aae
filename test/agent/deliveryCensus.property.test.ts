// The agent's census of a subject reader, on random streams: a reader given every message on its
// subject is never judged short, and one that skipped a message at or below a count's last
// sequence is, once it has read past that sequence, wherever the count was asked and answered.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryCensus } from '@muster/agent/testing';

// A stream of `length` sequences, the ones on the reader's subject, and one it may skip.
const streams = fc
  .record({ length: fc.integer({ min: 2, max: 60 }), picks: fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }) })
  .map(({ length, picks }) => ({ length, onSubject: Array.from({ length }, (_, i) => i + 1).filter((s) => picks[s - 1] === true) }))
  .filter(({ onSubject }) => onSubject.length >= 1);

const runs = streams.chain(({ length, onSubject }) =>
  fc.record({
    length: fc.constant(length),
    onSubject: fc.constant(onSubject),
    skipped: fc.option(fc.constantFrom(...onSubject), { nil: null }),
    // how many messages the reader was given when the count was asked, and how many more before its answer
    askAfter: fc.nat({ max: onSubject.length }),
    answerAfter: fc.nat({ max: onSubject.length }),
    // how far the stream had got when it counted, past the last message given before the ask
    countedAhead: fc.nat({ max: length }),
  }),
);

describe('DeliveryCensus', () => {
  it('judges a count short exactly when the reader skipped a message the count includes', () => {
    fc.assert(
      fc.property(runs, ({ length, onSubject, skipped, askAfter, answerAfter, countedAhead }) => {
        const given = onSubject.filter((s) => s !== skipped);
        const census = new DeliveryCensus();
        const verdicts: boolean[] = [];
        const record = (seq: number): void => {
          const v = census.record(seq);
          if (v !== null) verdicts.push(v);
        };
        const ask = Math.min(askAfter, given.length);
        given.slice(0, ask).forEach(record);
        census.ask();
        const answerAt = Math.min(ask + answerAfter, given.length);
        given.slice(ask, answerAt).forEach(record);
        // the stream counted after the ask: at or past every message given by then (the ask's side)
        const floor = Math.max(0, ...given.slice(0, ask));
        const lastSeq = Math.min(length, floor + countedAhead);
        const count = { messages: onSubject.filter((s) => s <= lastSeq).length, lastSeq };
        const v = census.answer(count, false);
        if (v !== null) verdicts.push(v);
        given.slice(answerAt).forEach(record);
        const readPast = given.some((s) => s > lastSeq);
        const short = skipped !== null && skipped <= lastSeq;
        // judged only once the reader has read past the count; then short exactly when it skipped one of it
        expect(verdicts).toEqual(readPast ? [short] : []);
      }),
      { numRuns: 3_000 },
    );
  });

  it('after silence it judges at once against the whole count, and a restart forgets what was given', () => {
    const census = new DeliveryCensus();
    [2, 5].forEach((s) => census.record(s));
    census.ask();
    expect(census.answer({ messages: 3, lastSeq: 9 }, true)).toBe(true);
    census.ask();
    expect(census.answer({ messages: 2, lastSeq: 9 }, true)).toBe(false);
    census.restart();
    [2, 5, 7].forEach((s) => census.record(s));
    census.ask();
    expect(census.answer({ messages: 3, lastSeq: 9 }, true)).toBe(false);
    // an answer with no ask outstanding (its reader was replaced) is no verdict
    census.forget();
    expect(census.answer({ messages: 9, lastSeq: 9 }, true)).toBeNull();
  });
});
