// Label selectors (selectors.ts), validated as the API server validates them.
import { describe, expect, it } from '@jest/globals';
import { cond, gateway, gatewayClass, http, listener, namespace, run } from './builders.js';

describe('label selectors are validated like the API server does', () => {
  const selecting = (selector: Record<string, unknown>) =>
    run([
      gatewayClass(),
      namespace('apps', { team: 'a' }),
      gateway('gw', [
        http('sel', 80, { allowedRoutes: { namespaces: { from: 'Selector', selector } } }),
        http('ok', 8080),
      ]),
    ]);
  it.each([
    [
      { matchExpressions: [{ key: 'team', operator: 'In' }] },
      'spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].values must not be empty with operator In',
    ],
    [
      { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] },
      'selector.matchExpressions[0].values must be empty with operator Exists',
    ],
    [
      { matchExpressions: [{ key: 'team', operator: 'Equals', values: ['a'] }] },
      'selector.matchExpressions[0].operator: "Equals" is not one of In, NotIn, Exists, DoesNotExist',
    ],
    [{ matchLabels: { 'bad key!': 'a' } }, 'selector.matchLabels: "bad key!" is not a valid label key'],
    [{ matchLabels: { team: 'has space' } }, 'selector.matchLabels: "has space" is not a valid label value'],
  ])('%j: the listener is not accepted, and the message names the field', (selector, message) => {
    const r = selecting(selector);
    const l = listener(r, 'infra', 'gw', 'sel');
    expect(cond(l.conditions, 'Accepted')).toMatchObject({ status: 'False', reason: 'UnsupportedValue' });
    expect(cond(l.conditions, 'Accepted')!.message).toContain(message);
    expect(cond(listener(r, 'infra', 'gw', 'ok').conditions, 'Accepted')!.status).toBe('True');
  });
  it('a valid selector with a prefixed key is accepted', () => {
    const l = listener(
      selecting({
        matchLabels: { 'example.com/team': 'a' },
        matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }],
      }),
      'infra',
      'gw',
      'sel',
    );
    expect(cond(l.conditions, 'Accepted')!.status).toBe('True');
  });
});
