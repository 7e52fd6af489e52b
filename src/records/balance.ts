import { z } from 'zod';
import { recordParser, type RecordParser } from './parse.js';
import {
  centsMoneySchema,
  decimalMoneySchema,
  uuidSchema,
  type CentsMoney,
  type DecimalMoney,
} from './primitives.js';

/** The partner app's own token wallet (`GET /balance`). */
export interface AccountBalance {
  /** Lower-case UUID of the account balance. */
  id: string;
  /** The app's merchant id. */
  ownerId: string;
  /** `svc_merchant` for an app wallet; open string. */
  ownerType: string;
  /** Smallest-unit big-integer string; currency lower-case. */
  balance: DecimalMoney;
  /** Integer cents; currency lower-case. */
  balanceUsd: CentsMoney;
  /** Its fields the parser does not know (docs/schema-drift.md); null or absent when none. */
  extra?: Record<string, unknown> | null;
}

const accountBalanceSchema = z.object({
  id: uuidSchema,
  object: z.literal('account_balance'),
  owner_id: uuidSchema,
  owner_type: z.string(),
  balance: decimalMoneySchema,
  balance_usd: centsMoneySchema,
});

/** `GET /balance`. */
export const parseAccountBalance: RecordParser<AccountBalance> = recordParser(
  accountBalanceSchema,
  (w, _raw, extra) => ({
    id: w.id,
    ownerId: w.owner_id,
    ownerType: w.owner_type,
    balance: w.balance,
    balanceUsd: w.balance_usd,
    extra,
  }),
);
