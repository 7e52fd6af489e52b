import type { PartnerApi } from '../../api/partner-api.js';
import type { Window } from '../../sync/windows.js';
import { CHECKINS_STREAM } from '../../warehouse/sync-window-reads.js';
import type { StreamName } from '../stream-names.js';
import type { StreamDeps } from '../stream.js';

/** What the check-in feed's work is given: the two feed calls of the partner API. */
export type CheckinsDeps = StreamDeps<Pick<PartnerApi, 'checkInPages' | 'countCheckIns'>>;

/**
 * The feed's name in the stream registry. The warehouse keys sync_windows with the same string
 * (it sits below the registry); `satisfies` keeps the two from drifting apart.
 */
export const CHECKINS = CHECKINS_STREAM satisfies StreamName;

/** A window as the Date range the repositories take. */
export function rangeOf(window: Window): { start: Date; end: Date } {
  return { start: new Date(window.start), end: new Date(window.end) };
}

/** A window as logs and `problems` show it. */
export function describeWindow(window: Window): string {
  return `${new Date(window.start).toISOString()}..${new Date(window.end).toISOString()}`;
}
