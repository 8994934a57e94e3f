// Kubernetes resource quantities (apimachinery's resource.Quantity): a decimal number and a suffix,
// binary (Ki … Ei), decimal (n u m "" k M G T P E) or an exponent (e3, E-2).
const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;
const SUFFIX: Record<string, number> = {
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a quantity (`512Mi`, `1G`, `1.5Gi`, `129e6`), or undefined when it is not one. */
export function quantityValue(q: string): number | undefined {
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const suffix = m[2] ?? '';
  const scale = /^[eE]./.test(suffix) ? 10 ** Number(suffix.slice(1)) : SUFFIX[suffix]!;
  return Number(m[1]) * scale;
}
