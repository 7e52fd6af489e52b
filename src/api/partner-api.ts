import type { Page, PageStream } from './paging.js';
import type { RequestPriority } from './priority-gate.js';
import type {
  AccountBalance,
  Challenge,
  CheckIn,
  FullPaymentIntent,
  ListedRestaurant,
  ListResult,
  Location,
  MemberStatus,
  Membership,
  OpenHours,
  ParseResult,
  PaymentIntent,
  User,
  UserTag,
  UserWallet,
} from '../records/index.js';

// Exactly the calls the pipeline makes of the partner API. The HTTP client implements it; tests
// and the pipeline depend only on this. Pages and single records come back normalized: bad
// records are `rejections` (or `ok: false`), never dropped and never thrown.

export type { Page, PageStream } from './paging.js';

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** In-process order of requests waiting for the shared rate limit (intent polling first). */
  priority?: RequestPriority;
}

export interface PageOptions extends CallOptions {
  /** Asked for; the server's `pagination.page_size` is what counts. */
  pageSize?: number;
  /** Zero-indexed. */
  startPage?: number;
}

export interface CheckInWindow {
  /** Inclusive. */
  createdAfter: Date;
  /** Exclusive. */
  createdBefore: Date;
}

export interface PartnerApi {
  /** `GET /check_ins?created_after&created_before`, newest first. */
  checkInPages(query: CheckInWindow & PageOptions): PageStream<CheckIn>;
  /** `total_count` of a window, from a `page_size=1` probe. */
  countCheckIns(query: CheckInWindow & CallOptions): Promise<number>;
  restaurantPages(options?: PageOptions): PageStream<ListedRestaurant>;
  /** `GET /locations/{id}` (reduced form); null when the location does not exist. */
  getLocation(id: string, options?: CallOptions): Promise<ParseResult<Location> | null>;
  /** `GET /locations/{id}/open_hours`; null when the location does not exist. */
  getLocationOpenHours(id: string, options?: CallOptions): Promise<ParseResult<OpenHours> | null>;
  challengePages(restaurantId: string, options?: PageOptions): PageStream<Challenge>;
  getBalance(options?: CallOptions): Promise<ParseResult<AccountBalance>>;
  /** `GET /payment_intents` (list form), optionally for one payee wallet. */
  paymentIntentPages(options?: PageOptions & { payee?: string }): PageStream<PaymentIntent>;
  /** `GET /payment_intents/{id}` (full form); null when it does not exist. */
  getPaymentIntent(id: string, options?: CallOptions): Promise<ParseResult<FullPaymentIntent> | null>;
  /** Member routes (OAuth bearer). */
  getMe(options?: CallOptions): Promise<ParseResult<User>>;
  /** null when the member has no active status record (404 resource_not_found). */
  getMyStatus(options?: CallOptions): Promise<ParseResult<MemberStatus> | null>;
  getMyWallets(options?: CallOptions): Promise<ListResult<UserWallet>>;
  getMyTags(options?: CallOptions): Promise<ListResult<UserTag>>;
  myCheckInPages(options?: PageOptions): PageStream<CheckIn>;
  myMembershipPages(options?: PageOptions & { restaurant?: string }): PageStream<Membership>;
  /** Releases sockets; the Redis and database handles belong to the caller. */
  close(): Promise<void>;
}

export type { Page as PartnerApiPage };
