/**
 * The lease under which some work ran is no longer this process's: it expired (renewals did not
 * reach Postgres in time) or another holder took it. The work stops and commits nothing more;
 * whoever holds the lease now does it. Not a failure of the work itself, nor of the partner API.
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(
    readonly lease: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`lease ${lease} lost: ${reason}`, options);
  }
}
