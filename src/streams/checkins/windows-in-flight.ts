/**
 * Check-in windows one process pages at once: the worker's window queue runs this many jobs per
 * process, and a foreground `run checkins` or `resync checkins` as many windows: one parses while
 * the other waits on the API.
 */
export const CHECKIN_WINDOWS_IN_FLIGHT = 2;
