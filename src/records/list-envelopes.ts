import type { Challenge } from './challenge.js';
import { parseChallenge } from './challenge.js';
import type { CheckIn } from './check-in.js';
import { parseFeedCheckIn, parseShortFormCheckIn } from './check-in.js';
import type { Membership, UserTag, UserWallet } from './member.js';
import { parseMembership, parseUserTag, parseUserWallet } from './member.js';
import { parsePage, parseList, type ListResult, type PageResult } from './pagination.js';
import type { PaymentIntent } from './payment-intent.js';
import { parsePaymentIntentListItem } from './payment-intent.js';
import type { ListedRestaurant } from './restaurant.js';
import { parseListedRestaurant } from './restaurant.js';

// One function per list response of the spec: envelope key and item form fixed here, so callers
// cannot pair the member check-in list with the feed's item parser by mistake.

/** `GET /restaurants`: `{ restaurants, pagination }`. */
export function parseRestaurantPage(raw: unknown): PageResult<ListedRestaurant> {
  return parsePage(raw, 'restaurants', parseListedRestaurant);
}

/** `GET /check_ins` (venue feed): `{ check_ins, pagination }`, full location form. */
export function parseFeedCheckInPage(raw: unknown): PageResult<CheckIn> {
  return parsePage(raw, 'check_ins', parseFeedCheckIn);
}

/** `GET /users/me/check_ins`: `{ check_ins, pagination }`, short location form. */
export function parseMemberCheckInPage(raw: unknown): PageResult<CheckIn> {
  return parsePage(raw, 'check_ins', parseShortFormCheckIn);
}

/** `GET /users/me/memberships`: `{ memberships, pagination }`. */
export function parseMembershipPage(raw: unknown): PageResult<Membership> {
  return parsePage(raw, 'memberships', parseMembership);
}

/** `GET /payment_intents`: `{ payment_intents, pagination }`, list subset form. */
export function parsePaymentIntentPage(raw: unknown): PageResult<PaymentIntent> {
  return parsePage(raw, 'payment_intents', parsePaymentIntentListItem);
}

/** `GET /challenges`: `{ challenges, pagination }`. */
export function parseChallengePage(raw: unknown): PageResult<Challenge> {
  return parsePage(raw, 'challenges', parseChallenge);
}

/** `GET /users/me/wallets`: `{ wallets }`, not paginated. */
export function parseWalletList(raw: unknown): ListResult<UserWallet> {
  return parseList(raw, 'wallets', parseUserWallet);
}

/** `GET /users/me/tags`: `{ tags }`, not paginated. */
export function parseUserTagList(raw: unknown): ListResult<UserTag> {
  return parseList(raw, 'tags', parseUserTag);
}
