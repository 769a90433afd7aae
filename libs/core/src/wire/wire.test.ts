// The wire contract built and parsed in one place: every msg id and subject the core builds parses
// back to what built it, and what is not of the form parses to null.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decisionMsgId, parseDecisionMsgId } from './msgIds.ts';
import { idOf, nodeInputOf, queueSetOf, subjects } from './subjects.ts';
import type { NodeInputKind } from './subjects.ts';

const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/);
const kind = fc.constantFrom<NodeInputKind>('register', 'drain', 'lost', 'done');

describe('the wire contract', () => {
  it('parses every decision msg id back to its log sequence, index and node', () => {
    fc.assert(fc.property(fc.nat(), fc.nat(), fc.option(token, { nil: undefined }), (logSeq, index, node) => {
      expect(parseDecisionMsgId(decisionMsgId(logSeq, index, node))).toEqual({ logSeq, index, node: node ?? null });
    }));
    expect(decisionMsgId(12, 0)).toBe('muster:12:0');
    expect(decisionMsgId(12, 3, 'n1')).toBe('muster:12:3:n1');
  });

  it('parses no other msg id', () => {
    for (const id of ['', 'muster:', 'muster:1', 'muster:a:1', 'muster:1:b', 'other:1:2', 'j1:1']) expect(parseDecisionMsgId(id)).toBeNull();
  });

  it('parses every node input and queue subject back to its parts, and no other subject', () => {
    fc.assert(fc.property(token, kind, (nodeId, k) => {
      expect(nodeInputOf(subjects.nodeInput(nodeId, k))).toEqual({ nodeId, kind: k });
      expect(queueSetOf(subjects.queueSet(nodeId))).toBe(nodeId);
      expect(idOf(subjects.decision(nodeId))).toBe(nodeId);
    }));
    for (const s of [subjects.submit, subjects.policy, 'muster.in.node.n1.reboot', 'muster.in.node.a.b.done', 'muster.in.queue..set']) {
      expect(nodeInputOf(s)).toBeNull();
      expect(queueSetOf(s)).toBeNull();
    }
  });
});
