/*
 * clipanion 3.2.1 builds its parser's state machine on every run (lib/core.js, CliBuilder
 * compile → simplifyMachine). simplifyMachine merges each option's value node with the
 * transitions of the node it returns to, and checks every transition against those already
 * there with a callback that destructures its argument: interpreted once per start, each
 * such call allocates an array iterator and its results. For render-corefile (22 options,
 * each reachable from 3 nodes) that was about 27,000 calls, 0.4 MB of garbage and 35 million
 * instructions, 3 ms of a 90 ms cold start (bench/RESULTS.md). The bundle makes the same
 * comparisons by index; test/clipanion-patch.test.ts checks that every command's machine
 * comes out identical.
 */

/** Where the bundler applies the edits. */
export const CLIPANION_CORE = /[\\/]node_modules[\\/]clipanion[\\/]lib[\\/]core\.js$/;

const EDITS = [
  [
    'if (!store.some(({ to }) => transition.to === to)) {',
    'if (!store.some((other) => transition.to === other.to)) {',
  ],
  [
    'if (!nodeDef.dynamics.some(([otherTest, { to }]) => test === otherTest && transition.to === to))',
    'if (!nodeDef.dynamics.some((other) => test === other[0] && transition.to === other[1].to))',
  ],
];

/** clipanion's lib/core.js with the edits; throws when its text is not the one they were made for. */
export function patchClipanionCore(text) {
  let out = text;
  for (const [from, to] of EDITS) {
    const found = out.split(from).length - 1;
    if (found !== 1) throw new Error(`clipanion/lib/core.js has ${found} copies of \`${from}\`, not 1: a new clipanion? Check scripts/clipanion-patch.mjs against it`);
    out = out.replace(from, to);
  }
  return out;
}
