import { requireBearer } from '../auth-checks.js';
import type { SimContext } from '../context.js';
import type { MalformedIntentField } from '../faults.js';
import { intentActionForm, intentFullForm, intentListForm } from '../forms.js';
import type { Route, SimRequest, SimResponse } from '../http-types.js';
import { cancelIntent, confirmIntent, createIntent, IntentTransitionError } from '../intents.js';
import { isUuid, pageOf, paginationWrapper, parsePaging, parseUuidParam, type Paging } from '../params.js';
import { envelopeA, invalidParameter, jsonResponse, resourceNotFound } from '../responses.js';
import { findMember, walletOwner, type IntentRecord } from '../world.js';

/** The malformedIntents fault: one field of the full form made invalid. */
function malformed(
  form: Record<string, unknown>,
  field: MalformedIntentField | undefined,
): Record<string, unknown> {
  switch (field) {
    case undefined:
      return form;
    case 'metadata':
      return { ...form, metadata: { ...(form['metadata'] as object), table: 12 } };
    case 'paid_at':
      return { ...form, paid_at: 'yesterday' };
    case 'status':
      return { ...form, status: 'settled' };
    case 'amount':
      return { ...form, amount: { ...(form['amount'] as object), value: 12.5 } };
  }
}

/** Page `page` of the list read from its newest end. */
function newestFirstPage<T>(oldestFirst: readonly T[], paging: Paging): T[] {
  const out: T[] = [];
  const start = oldestFirst.length - 1 - paging.page * paging.pageSize;
  for (let i = start; i >= 0 && i > start - paging.pageSize; i--) {
    const item = oldestFirst[i];
    if (item !== undefined) out.push(item);
  }
  return out;
}

const invalidBody = (message: string): SimResponse =>
  envelopeA(400, 'invalid_request_error', 'invalid_request_error', message);

function parseJsonObject(body: string): Record<string, unknown> | null {
  if (body.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Payment intents: any valid bearer token (decision: no scope required); 401 empty otherwise. */
export function paymentRoutes(ctx: SimContext): Route[] {
  const authed = authedFor(ctx);
  return [
    { method: 'POST', pattern: /^\/payment_intents$/, handler: authed(createIntentFor(ctx)) },
    {
      method: 'GET',
      pattern: /^\/payment_intents$/,
      handler: authed((request) => listIntents(ctx, request)),
    },
    {
      method: 'GET',
      pattern: /^\/payment_intents\/([^/]+)$/,
      handler: authed((_r, [id = '']) =>
        withIntent(ctx, id, (i) =>
          jsonResponse(
            200,
            malformed(intentFullForm(i, ctx.clock.nowMs()), ctx.faults.malformedIntent(i.id)),
          ),
        ),
      ),
    },
    {
      method: 'POST',
      pattern: /^\/payment_intents\/([^/]+)\/confirm$/,
      handler: authed((request, [id = '']) => withIntent(ctx, id, (intent) => confirm(ctx, request, intent))),
    },
    {
      method: 'POST',
      pattern: /^\/payment_intents\/([^/]+)\/cancel$/,
      handler: authed((_r, [id = '']) => withIntent(ctx, id, (intent) => cancel(ctx, intent))),
    },
  ];
}

type AuthedAnswer = (request: SimRequest, params: string[], memberId: string) => SimResponse;

/** A handler that answers only a valid bearer token of a known member, and says it used one. */
function authedFor(ctx: SimContext) {
  const { world, credentials } = ctx;
  const memberExists = (id: string): boolean => findMember(world, id) !== undefined;
  return (answer: AuthedAnswer) =>
    async (request: SimRequest, params: string[]): Promise<SimResponse> => {
      const auth = await requireBearer(credentials, request, null, memberExists);
      if (!auth.ok) return auth.response;
      return { ...answer(request, params, auth.value.memberId), credential: 'bearer' };
    };
}

function withIntent(ctx: SimContext, id: string, answer: (intent: IntentRecord) => SimResponse): SimResponse {
  if (!isUuid(id)) return invalidParameter('id', 'expected a UUID');
  const intent = ctx.world.intents.get(id.toLowerCase());
  return intent ? answer(intent) : resourceNotFound('payment_intent');
}

function transitionError(error: unknown): SimResponse {
  if (error instanceof IntentTransitionError)
    return envelopeA(400, 'invalid_request_error', error.code, error.message);
  throw error;
}

function createIntentFor(ctx: SimContext): AuthedAnswer {
  const { world, clock } = ctx;
  return (request, _params, memberId) => {
    const body = parseJsonObject(request.body);
    if (!body) return invalidBody('The request body must be a JSON object.');
    const merchant = body['svc_merchant_id'];
    if (typeof merchant !== 'string' || !isUuid(merchant))
      return invalidParameter('svc_merchant_id', 'a UUID is required');
    if (merchant.toLowerCase() !== world.app.merchantId)
      return invalidParameter('svc_merchant_id', 'unknown merchant for this app');
    const key = body['idempotency_key'];
    if (typeof key === 'string' && key !== '') {
      const existing = [...world.intents.values()].find((i) => i.idempotencyKey === key);
      if (existing) return jsonResponse(200, intentFullForm(existing, clock.nowMs()));
    }
    const amount = body['amount'];
    const rawValue =
      typeof amount === 'object' && amount !== null ? (amount as Record<string, unknown>)['value'] : amount;
    if (typeof rawValue !== 'string' || !/^[1-9]\d*$/.test(rawValue))
      return invalidParameter('amount', 'expected { value: positive big-integer string, currency }');
    const payer =
      typeof body['payer_account_balance_id'] === 'string'
        ? body['payer_account_balance_id']
        : findMember(world, memberId)?.wallets.find((w) => w.type === 'SPENDING')?.id;
    try {
      const intent = createIntent(world, ctx.runtimeIds, clock.nowMs(), {
        amount: rawValue,
        ...(payer !== undefined ? { payer } : {}),
        ...(typeof body['description'] === 'string' ? { description: body['description'] } : {}),
        ...(typeof body['metadata'] === 'object' && body['metadata'] !== null
          ? { metadata: body['metadata'] as Record<string, string> }
          : {}),
        idempotencyKey: typeof key === 'string' && key !== '' ? key : null,
      });
      return jsonResponse(201, intentFullForm(intent, clock.nowMs()));
    } catch (error) {
      if (error instanceof RangeError) return invalidParameter('payer_account_balance_id', error.message);
      throw error;
    }
  };
}

function listIntents(ctx: SimContext, request: SimRequest): SimResponse {
  const { world, clock } = ctx;
  const payee = parseUuidParam(request.query, 'payee_account_balance_id');
  if (!payee.ok) return payee.response;
  const payer = parseUuidParam(request.query, 'payer_account_balance_id');
  if (!payer.ok) return payer.response;
  const paging = parsePaging(request.query);
  if (!paging.ok) return paging.response;
  const all = world.index.intentsInOrder; // creation order; the list is newest first
  const everyIntent = payer.value === null && (payee.value === null || payee.value === world.app.wallet.id);
  // Every intent is payable to the app wallet: the pipeline's usual ask reads one page, not the whole list.
  const matching = everyIntent
    ? newestFirstPage(all, paging.value)
    : all
        .filter(
          (i) =>
            (payee.value === null || i.payeeWalletId === payee.value) &&
            (payer.value === null || i.payerWalletId === payer.value),
        )
        .reverse();
  const total = everyIntent ? all.length : matching.length;
  const page = everyIntent ? matching : pageOf(matching, paging.value);
  const now = clock.nowMs();
  return jsonResponse(200, {
    payment_intents: page.map((i) => intentListForm(i, now)),
    pagination: paginationWrapper(total, paging.value),
  });
}

function confirm(ctx: SimContext, request: SimRequest, intent: IntentRecord): SimResponse {
  const { world, clock } = ctx;
  const body = parseJsonObject(request.body);
  const userId = body?.['user_id'];
  if (typeof userId !== 'string' || !isUuid(userId)) return invalidParameter('user_id', 'a UUID is required');
  const payerOwner = walletOwner(world, intent.payerWalletId);
  if (payerOwner?.id !== userId.toLowerCase())
    return invalidParameter('user_id', 'the user does not own the paying wallet');
  try {
    return jsonResponse(
      200,
      intentActionForm(confirmIntent(world, intent, clock.nowMs()), clock.nowMs(), 'confirm'),
    );
  } catch (error) {
    return transitionError(error);
  }
}

function cancel(ctx: SimContext, intent: IntentRecord): SimResponse {
  const { world, clock } = ctx;
  try {
    return jsonResponse(
      200,
      intentActionForm(cancelIntent(world, intent, clock.nowMs()), clock.nowMs(), 'cancel'),
    );
  } catch (error) {
    return transitionError(error);
  }
}
