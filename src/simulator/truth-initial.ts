import type { TruthKind } from './truth-log.js';
import type { MemberRecord, World } from './world.js';

/**
 * When a record last changed according to the generated data alone (before any change the simulator
 * logged): its `updated_at`, its newest visit, its wallets' provisioning. Null: no such record.
 */
export function initialChangeAt(world: World, kind: TruthKind, id: string): number | null {
  switch (kind) {
    case 'member.profile':
      return member(world, id)?.updatedAtMs ?? null;
    case 'member.status':
      return maxOf(member(world, id)?.statuses.map((s) => s.updatedAtMs));
    case 'member.wallets':
      return maxOf(member(world, id)?.wallets.map((w) => w.createdAtMs));
    case 'member.tags': {
      const m = member(world, id);
      return m ? (maxOf(m.tags.map((t) => t.updatedAtMs)) ?? m.createdAtMs) : null;
    }
    case 'member.visits': {
      const m = member(world, id);
      return m
        ? (maxOf(m.checkIns.map((v) => Math.max(v.createdAtMs, v.endedAtMs ?? 0))) ?? m.createdAtMs)
        : null;
    }
    case 'member.memberships': {
      const m = member(world, id);
      return m ? (maxOf(m.checkIns.map((v) => v.createdAtMs)) ?? m.createdAtMs) : null;
    }
    case 'restaurant':
      return world.index.restaurantById.get(id)?.updatedAtMs ?? null;
    case 'restaurant.challenges': {
      const restaurant = world.index.restaurantById.get(id);
      if (!restaurant) return null;
      const own = world.index.challengesByRestaurant.get(id) ?? [];
      return maxOf(own.map((c) => c.updatedAtMs)) ?? restaurant.createdAtMs;
    }
    case 'location':
      return world.index.locationById.get(id)?.updatedAtMs ?? null;
    case 'location.open_hours':
      return world.index.locationById.get(id)?.createdAtMs ?? null;
    case 'intent': {
      const intent = world.intents.get(id);
      if (!intent) return null;
      // A pending intent whose expires_at passed before the simulator started reads as canceled since then.
      const expired =
        intent.paidAtMs === null && intent.canceledAtMs === null && intent.expiresAtMs !== null
          ? intent.expiresAtMs
          : null;
      return Math.max(
        intent.createdAtMs,
        intent.updatedAtMs,
        expired !== null && expired <= world.anchorMs ? expired : 0,
      );
    }
  }
}

function member(world: World, id: string): MemberRecord | undefined {
  return world.index.memberById.get(id);
}

function maxOf(values: number[] | undefined): number | null {
  if (!values || values.length === 0) return null;
  let max = -Infinity;
  for (const value of values) if (value > max) max = value;
  return max;
}
