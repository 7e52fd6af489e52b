import {
  CommonTableExpressionNameNode,
  CommonTableExpressionNode,
  CompiledQuery,
  Kysely,
  sql,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  RawNode,
  ValueNode,
  WhereNode,
  WithNode,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryExecutor,
  type QueryResult,
  type RootOperationNode,
  type TransactionSettings,
  type UnknownRow,
} from 'kysely';
import { heldLeasesQuery, LEASE_FENCE, type LeaseFence, type LeaseRef } from '../warehouse/leases.js';
import type { DB } from '../warehouse/schema.js';
import { LeaseLostError } from './lease-lost-error.js';

/**
 * The database as work under one or more leases sees it: every write is fenced. A transaction
 * begins with the fencing check (heldLeasesQuery: every lease still held by its token, rows locked
 * FOR KEY SHARE until commit) and aborts with LeaseLostError when a lease is gone; a statement outside
 * a transaction that may write is run as BEGIN, check, statement, COMMIT. Reads outside a
 * transaction run as they are: a read by a holder that lost its lease changes nothing.
 *
 * An UPDATE or DELETE built with kysely carries the check itself, in one statement (no BEGIN and
 * COMMIT around it): the check as a CTE, its rows locked FOR KEY SHARE, and the statement's WHERE
 * conditional on it (FenceInStatement); when it touches no row, the lease is checked again, and a
 * lost lease throws. So a window's start and completion cost one round trip each, as before.
 *
 * One mechanism for every write path of a leased pass (docs/running-in-production.md, "Leases and
 * fencing"): the pass gets this database as `deps.db` and writes as it always did. The single
 * statement that commits a check-in page carries the same check as a CTE of its own
 * (check-in-pages.ts), which is why `leases` and `unfenced` are exposed (to the warehouse as its
 * LeaseFence, src/warehouse/leases.ts).
 *
 * Connections are borrowed from the database it fences (same pool), so it costs nothing to create
 * one per lease. Leases nest: fencing a fenced database checks every lease, outer ones included.
 */
export class LeasedDatabase extends Kysely<DB> {
  readonly leases: readonly LeaseRef[];
  /** The database without fencing, for writes that belong to no lease (the run's own sync_runs row, OAuth tokens). */
  readonly unfenced: Kysely<DB>;
  /** The same, for the warehouse's one statement that fences itself (leaseFenceOf). */
  readonly [LEASE_FENCE]: LeaseFence;

  constructor(base: Kysely<DB>, leases: readonly LeaseRef[]) {
    if (base instanceof LeasedDatabase) throw new TypeError('fence the unfenced database (use fenced())');
    if (leases.length === 0) throw new TypeError('a leased database needs at least one lease');
    const checkQuery = heldLeasesQuery(leases);
    super({
      dialect: fencedDialect(base.getExecutor(), leases, checkQuery.compile(base)),
      plugins: [new FenceInStatement(sql`(${checkQuery})`.toOperationNode(), leases.length)],
    });
    this.leases = leases;
    this.unfenced = base;
    this[LEASE_FENCE] = {
      leases,
      unfenced: base,
      lostLeaseError: (heldNames) => lostLeaseError(leases, heldNames),
    };
  }
}

/** `db` fenced by `lease` too (and by the leases `db` is already fenced by). */
export function fenced(db: Kysely<DB>, lease: LeaseRef): LeasedDatabase {
  return db instanceof LeasedDatabase
    ? new LeasedDatabase(db.unfenced, [...db.leases, lease])
    : new LeasedDatabase(db, [lease]);
}

/** The database under `db`'s fencing (itself when it is not fenced). */
export function unfenced(db: Kysely<DB>): Kysely<DB> {
  return db instanceof LeasedDatabase ? db.unfenced : db;
}

/** The leases `db` is fenced by (none for an unfenced database). */
export function leasesOf(db: Kysely<DB>): readonly LeaseRef[] {
  return db instanceof LeasedDatabase ? db.leases : [];
}

/** A LeaseLostError naming the leases of `expected` missing from the check's `heldNames`. */
export function lostLeaseError(expected: readonly LeaseRef[], heldNames: readonly string[]): LeaseLostError {
  const held = new Set(heldNames);
  const lost = expected.filter((lease) => !held.has(lease.name)).map((lease) => lease.name);
  return new LeaseLostError(lost.join(', ') || '?', 'it expired, or another holder took it');
}

/** The name of the CTE FenceInStatement adds: how the driver knows a statement fences itself. */
const FENCE_CTE = 'lease_fence';

/** Adds the lease check to kysely-built UPDATE and DELETE statements (see LeasedDatabase). */
class FenceInStatement implements KyselyPlugin {
  constructor(
    private readonly check: RawNode,
    private readonly leaseCount: number,
  ) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const { node } = args;
    if (node.kind !== 'UpdateQueryNode' && node.kind !== 'DeleteQueryNode') return node;
    const cte = CommonTableExpressionNode.create(CommonTableExpressionNameNode.create(FENCE_CTE), this.check);
    const held = RawNode.create(
      [`(select count(*) from ${FENCE_CTE}) = `, ''],
      [ValueNode.create(this.leaseCount)],
    );
    return {
      ...node,
      with: node.with === undefined ? WithNode.create(cte) : WithNode.cloneWithExpression(node.with, cte),
      where:
        node.where === undefined
          ? WhereNode.create(held)
          : WhereNode.cloneWithOperation(node.where, 'And', held),
    };
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

/** Whether FenceInStatement put the lease check into this statement. */
function fencesItself(query: CompiledQuery): boolean {
  const node = query.query;
  if (node.kind !== 'UpdateQueryNode' && node.kind !== 'DeleteQueryNode') return false;
  return node.with?.expressions.some((cte) => cte.name.table.table.identifier.name === FENCE_CTE) === true;
}

function fencedDialect(lender: QueryExecutor, leases: readonly LeaseRef[], check: CompiledQuery): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new FencedDriver(lender, leases, check),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

/**
 * Whether a statement run outside a transaction can only read. Conservative: kysely's selects,
 * and raw SQL that starts with `select` and names nothing that writes or locks. Anything else is
 * fenced (a false "write" costs three round trips; a false "read" would be an unfenced write).
 */
export function readsOnly(query: CompiledQuery): boolean {
  if (query.query.kind === 'SelectQueryNode')
    return !/\bfor\s+(update|share|no\s+key|key\s+share)\b/i.test(query.sql);
  if (query.query.kind !== 'RawNode') return false;
  return (
    /^\s*select\b/i.test(query.sql) &&
    !/\b(insert|update|delete|merge|nextval|setval|set_config|pg_advisory\w*|for\s+share)\b/i.test(query.sql)
  );
}

interface Loan {
  connection: DatabaseConnection;
  giveBack(): Promise<void>;
}

/**
 * Borrows one connection of `lender` until giveBack(): kysely lends connections only for the
 * duration of a callback, so the callback waits for the return.
 */
function borrow(lender: QueryExecutor): Promise<Loan> {
  return new Promise<Loan>((resolve, reject) => {
    let giveBack: () => void = () => undefined;
    const returned = new Promise<void>((done) => {
      giveBack = done;
    });
    const lent: Promise<void> = lender.provideConnection(async (connection) => {
      resolve({
        connection,
        giveBack: async () => {
          giveBack();
          await lent;
        },
      });
      await returned;
    });
    // Before resolve: the pool could not lend (reject). After it: settled already, a no-op.
    lent.catch(reject);
  });
}

const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

class FencedConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    readonly loan: Loan,
    private readonly verify: (connection: DatabaseConnection) => Promise<void>,
  ) {}

  get inner(): DatabaseConnection {
    return this.loan.connection;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction || readsOnly(query)) return this.inner.executeQuery<R>(query);
    if (fencesItself(query)) {
      const result = await this.inner.executeQuery<R>(query);
      // No row written: because nothing matched, or because the lease is gone? Ask.
      if (result.numAffectedRows === 0n) await this.verify(this.inner);
      return result;
    }
    await this.inner.executeQuery(BEGIN);
    try {
      await this.verify(this.inner);
      const result = await this.inner.executeQuery<R>(query);
      await this.inner.executeQuery(COMMIT);
      return result;
    } catch (error) {
      await this.inner.executeQuery(ROLLBACK).catch(() => undefined);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (!this.inTransaction && !readsOnly(query)) {
      throw new Error('a leased database streams reads only; run writes with executeQuery');
    }
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class FencedDriver implements Driver {
  constructor(
    private readonly lender: QueryExecutor,
    private readonly leases: readonly LeaseRef[],
    private readonly check: CompiledQuery,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new FencedConnection(await borrow(this.lender), (connection) => this.verify(connection));
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const fencedConnection = connection as FencedConnection;
    await fencedConnection.inner.executeQuery(beginStatement(settings));
    try {
      await this.verify(fencedConnection.inner);
    } catch (error) {
      // kysely rolls back only a transaction whose begin succeeded: end this one here.
      await fencedConnection.inner.executeQuery(ROLLBACK).catch(() => undefined);
      throw error;
    }
    fencedConnection.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const fencedConnection = connection as FencedConnection;
    try {
      await fencedConnection.inner.executeQuery(COMMIT);
    } finally {
      fencedConnection.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const fencedConnection = connection as FencedConnection;
    try {
      await fencedConnection.inner.executeQuery(ROLLBACK);
    } finally {
      fencedConnection.inTransaction = false;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await (connection as FencedConnection).loan.giveBack();
  }

  /** The pool belongs to the database this one fences: nothing to close here. */
  async destroy(): Promise<void> {}

  private async verify(connection: DatabaseConnection): Promise<void> {
    const { rows } = await connection.executeQuery<{ name: string }>(this.check);
    if (rows.length !== this.leases.length) {
      throw lostLeaseError(
        this.leases,
        rows.map((row) => row.name),
      );
    }
  }
}

function beginStatement(settings: TransactionSettings): CompiledQuery {
  if (settings.isolationLevel === undefined && settings.accessMode === undefined) return BEGIN;
  const parts = ['start transaction'];
  if (settings.isolationLevel !== undefined) parts.push(`isolation level ${settings.isolationLevel}`);
  if (settings.accessMode !== undefined) parts.push(settings.accessMode);
  return CompiledQuery.raw(parts.join(' '));
}
