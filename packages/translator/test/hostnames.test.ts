import { describe, expect, it } from '@jest/globals';
import { intersectHostnames, routeHostnamesOnListener, validateHostname } from '../src/routes/hostnames.js';

describe('hostname intersection (httproute_types.go Hostnames)', () => {
  it('absent listener hostname matches any route hostname', () => {
    expect(intersectHostnames(undefined, 'a.example.com')).toBe('a.example.com');
  });
  it('exact hostnames intersect only when equal', () => {
    expect(intersectHostnames('a.example.com', 'a.example.com')).toBe('a.example.com');
    expect(intersectHostnames('a.example.com', 'b.example.com')).toBeUndefined();
  });
  it('a wildcard covers one or more labels but not the bare domain', () => {
    expect(intersectHostnames('*.example.com', 'a.example.com')).toBe('a.example.com');
    expect(intersectHostnames('*.example.com', 'a.b.example.com')).toBe('a.b.example.com');
    expect(intersectHostnames('*.example.com', 'example.com')).toBeUndefined();
    expect(intersectHostnames('foo.example.com', '*.example.com')).toBe('foo.example.com');
  });
  it('two wildcards intersect as the more specific one', () => {
    expect(intersectHostnames('*.com', '*.example.com')).toBe('*.example.com');
    expect(intersectHostnames('*.example.com', '*.com')).toBe('*.example.com');
    expect(intersectHostnames('*.example.com', '*.example.org')).toBeUndefined();
  });
  it('route hostnames that do not intersect are ignored for that listener', () => {
    expect(routeHostnamesOnListener('*.example.com', ['a.example.com', 'other.org'])).toEqual(['a.example.com']);
    expect(routeHostnamesOnListener('*.example.com', ['other.org'])).toEqual([]);
    expect(routeHostnamesOnListener(undefined, [])).toEqual(['*']);
  });
  it('IP addresses are not hostnames', () => {
    expect(validateHostname('10.0.0.1')).toMatch(/IP address/);
    expect(validateHostname('-bad.example.com')).toMatch(/RFC 1123/);
    expect(validateHostname('*.example.com')).toBeUndefined();
  });
});
