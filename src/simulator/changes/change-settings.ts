/**
 * How often each kind of record changes in the simulated world (docs/simulator.md, "Change model").
 * Intervals are means of exponential waits in simulated milliseconds, per record; 0 means never.
 * The defaults follow the partner's documentation where it says something (wallets are provisioned
 * once) and otherwise what a dining network looks like: a few members dine every few hours, many
 * rarely; tiers move about weekly; restaurants, locations and their hours are edited a few times a year.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface MemberActivityClass {
  /** Share of members in the class; the shares add up to 1. */
  share: number;
  /** Mean time from the end of one visit to the start of the next, over the day's rhythm. */
  visitEveryMs: number;
}

export interface ChangeSettings {
  memberActivity: MemberActivityClass[];
  /** A member's active status (progress, and sometimes level and tier) is updated. */
  statusEveryMs: number;
  /** Share of status updates that move the member one level up or down. */
  tierMoveShare: number;
  /** A member's tags change (the industry tag added, removed or re-scoped). */
  tagsEveryMs: number;
  /** A member's profile changes (phone number, zip code, avatar). */
  profileEveryMs: number;
  /** A restaurant is edited (price, cuisine, tags, Instagram URL). */
  restaurantEditEveryMs: number;
  /** A location is edited (phone number, payments, club, reservations). */
  locationEditEveryMs: number;
  /** A location's open hours change. */
  openHoursEditEveryMs: number;
  /** A restaurant starts a new challenge. */
  challengeAddedEveryMs: number;
  /** Mean run of a new challenge; it leaves /challenges when its end_time passes. */
  challengeLifetimeMs: number;
  /** New payment intents per hour; null: enough to keep the world's open intents steady. */
  intentsPerHour: number | null;
  /** Mean time an intent stays pending before it is paid or canceled. */
  intentOpenMs: number;
  intentPaidShare: number;
  /** The rest (1 − paid − canceled) stays pending until its expires_at (24 h) passes. */
  intentCanceledShare: number;
  /** Share of paid intents refunded later (the refund itself is "not shown" in the spec). */
  refundShare: number;
  refundAfterMs: number;
  /** Venue-feed check-ins per day, with the lunch and dinner peaks; null: the generated history's rate. */
  feedCheckInsPerDay: number | null;
}

export const DEFAULT_CHANGE_SETTINGS: ChangeSettings = {
  memberActivity: [
    { share: 0.1, visitEveryMs: 4 * HOUR },
    { share: 0.3, visitEveryMs: 3 * DAY },
    { share: 0.6, visitEveryMs: 30 * DAY },
  ],
  statusEveryMs: 7 * DAY,
  tierMoveShare: 0.3,
  tagsEveryMs: 180 * DAY,
  profileEveryMs: 90 * DAY,
  restaurantEditEveryMs: 60 * DAY,
  locationEditEveryMs: 90 * DAY,
  openHoursEditEveryMs: 180 * DAY,
  challengeAddedEveryMs: 30 * DAY,
  challengeLifetimeMs: 30 * DAY,
  intentsPerHour: null,
  intentOpenMs: 4 * HOUR,
  intentPaidShare: 0.85,
  intentCanceledShare: 0.1,
  refundShare: 0.01,
  refundAfterMs: 2 * DAY,
  feedCheckInsPerDay: null,
};

const SHARES: readonly string[] = ['tierMoveShare', 'intentPaidShare', 'intentCanceledShare', 'refundShare'];

/** Every setting name, for error messages and the command line. */
export const CHANGE_SETTING_NAMES = Object.keys(DEFAULT_CHANGE_SETTINGS) as (keyof ChangeSettings)[];

/** Defaults filled in; a RangeError naming the setting for a value out of range or an unknown name. */
export function resolveChangeSettings(partial: Partial<ChangeSettings> = {}): ChangeSettings {
  for (const key of Object.keys(partial))
    if (!CHANGE_SETTING_NAMES.includes(key as keyof ChangeSettings))
      throw new RangeError(`unknown change setting ${key}; known: ${CHANGE_SETTING_NAMES.join(', ')}`);
  const settings: ChangeSettings = { ...DEFAULT_CHANGE_SETTINGS };
  for (const [key, value] of Object.entries(partial) as [keyof ChangeSettings, unknown][]) {
    if (value === undefined) continue;
    if (key === 'memberActivity') settings.memberActivity = checkActivity(value);
    else if ((key === 'intentsPerHour' || key === 'feedCheckInsPerDay') && value === null)
      settings[key] = null;
    else {
      const max = SHARES.includes(key) ? 1 : Number.MAX_SAFE_INTEGER;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max)
        throw new RangeError(`change setting ${key} must be a number from 0 to ${max === 1 ? 1 : 'any'}`);
      (settings as unknown as Record<string, number>)[key] = value;
    }
  }
  if (settings.intentPaidShare + settings.intentCanceledShare > 1)
    throw new RangeError('change settings intentPaidShare + intentCanceledShare must be at most 1');
  return settings;
}

function checkActivity(value: unknown): MemberActivityClass[] {
  const fail = (): never => {
    throw new RangeError(
      'change setting memberActivity must be a non-empty list of { share, visitEveryMs } whose shares add up to 1',
    );
  };
  if (!Array.isArray(value) || value.length === 0) return fail();
  const classes = value.map((item: unknown) => {
    const { share, visitEveryMs } = (item ?? {}) as Record<string, unknown>;
    if (typeof share !== 'number' || typeof visitEveryMs !== 'number') return fail();
    if (!(share >= 0 && share <= 1) || !(visitEveryMs >= 0) || !Number.isFinite(visitEveryMs)) return fail();
    return { share, visitEveryMs };
  });
  if (Math.abs(classes.reduce((sum, c) => sum + c.share, 0) - 1) > 1e-9) return fail();
  return classes;
}
