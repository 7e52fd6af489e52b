import { describe, expect, it } from 'vitest';
import { credentialForPath, routeTemplate } from '../../../src/api/credential-routing.js';

describe('credentialForPath: the spec authentication table', () => {
  it.each([
    ['/restaurants', 'api-key'],
    ['/locations/8f0c1d6e-0000-4000-8000-000000000001', 'api-key'],
    ['/locations/8f0c1d6e-0000-4000-8000-000000000001/open_hours', 'api-key'],
    ['/check_ins', 'api-key'],
    ['/check_ins/8f0c1d6e-0000-4000-8000-000000000001', 'api-key'],
    ['/challenges', 'api-key'],
    ['/balance', 'api-key'],
    ['/users/me', 'bearer'],
    ['/users/me/check_ins', 'bearer'],
    ['/users/me/memberships?restaurant=x', 'bearer'],
    ['/payment_intents', 'bearer'],
    ['/payment_intents/8f0c1d6e-0000-4000-8000-000000000001', 'bearer'],
  ])('%s takes %s', (path, credential) => {
    expect(credentialForPath(path)).toBe(credential);
  });

  it('refuses paths outside every family rather than guessing a credential', () => {
    expect(() => credentialForPath('/users/123/check_ins')).toThrow(/no credential rule/);
    expect(() => credentialForPath('/restaurantsx')).toThrow(/no credential rule/);
  });

  it('turns ids into {id} for metric labels', () => {
    expect(routeTemplate('/locations/8F0C1D6E-0000-4000-8000-000000000001/open_hours')).toBe(
      '/locations/{id}/open_hours',
    );
  });
});
