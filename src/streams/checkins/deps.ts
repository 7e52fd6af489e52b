import type { PartnerApi } from '../../api/partner-api.js';
import type { Window } from '../../sync/windows.js';
import { STREAM_NAME } from '../../sync/stream-facts.js';
import type { StreamDeps } from '../stream.js';

/** What the check-in feed's work is given: the two feed calls of the partner API. */
export type CheckinsDeps = StreamDeps<Pick<PartnerApi, 'checkInPages' | 'countCheckIns'>>;

/** The feed's stream name (the warehouse keys sync_windows with the same constant, CHECKINS_STREAM). */
export const CHECKINS = STREAM_NAME.checkins;

/** A window as the Date range the repositories take. */
export function rangeOf(window: Window): { start: Date; end: Date } {
  return { start: new Date(window.start), end: new Date(window.end) };
}

/** A window as logs and `problems` show it. */
export function describeWindow(window: Window): string {
  return `${new Date(window.start).toISOString()}..${new Date(window.end).toISOString()}`;
}
