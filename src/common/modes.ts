/**
 * Live and test mode (docs/reference.md, "Test mode"). A workspace's test data lives in a test
 * twin of it: a workspace row of its own whose id is the live one's with TEST_SUFFIX, made with
 * it. Every table is already partitioned by workspace, so a test key (whose row is in the twin)
 * reads and writes only test objects, events, deliveries, requests and usage with no other
 * condition in any query, and a live key's path is unchanged. Ids of live workspaces are `ws_`
 * and base-36 digits, so no live id ends with the suffix.
 */
export type Mode = 'live' | 'test';
export const MODES: readonly Mode[] = ['live', 'test'];

const TEST_SUFFIX = '_test';

/** Whether the workspace (by id) is a live one: false for a test twin. */
export const isLiveWorkspace = (workspaceId: string): boolean => !workspaceId.endsWith(TEST_SUFFIX);

/** The test twin of a live workspace. */
export const testWorkspaceOf = (liveId: string): string => liveId + TEST_SUFFIX;

/** The live workspace of either (a live workspace is its own). */
export const liveWorkspaceOf = (workspaceId: string): string => (isLiveWorkspace(workspaceId) ? workspaceId : workspaceId.slice(0, -TEST_SUFFIX.length));

/** The workspace that holds `mode`'s data of a live workspace. */
export const workspaceIn = (liveId: string, mode: Mode): string => (mode === 'test' ? testWorkspaceOf(liveId) : liveId);

/** The mode of the data a workspace (by id) holds. */
export const modeOf = (workspaceId: string): Mode => (isLiveWorkspace(workspaceId) ? 'live' : 'test');

/**
 * The query parameter by which the internal API (the administration area) works on one mode's
 * data: keys, webhooks, deliveries, requests and usage. An id of the other mode's is not found.
 */
export const MODE_PARAMETER = {
  mode: { type: 'string', enum: ['live', 'test'], default: 'live', description: 'Which data: `live` (the default) or `test`, the test keys\' objects and events.' },
} as const;
