import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * Whether a name may be added as a domain, and why not. The name must already be in the form DNS
 * stores (ASCII, IDNA "xn--" labels for Unicode): a Unicode name is refused with its ASCII form in
 * the message, so the caller publishes records under exactly the name the service checks.
 */
export interface DomainNameProblem {
  field: 'domain';
  message: string;
}

const labelPattern = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const maxNameLength = 253;

export function domainNameProblems(input: string): DomainNameProblem[] {
  const problem = (message: string) => [{ field: 'domain' as const, message }];
  const name = input.trim().toLowerCase();
  if (name === '') return problem('domain is empty');
  if (name.endsWith('.')) return problem('Remove the trailing dot: write the name without it');
  if (isIP(name) !== 0 || isIP(name.replace(/^\[|\]$/g, '')) !== 0)
    return problem('An IP address is not a domain name');
  if (name.length > maxNameLength) return problem(`A domain name is at most ${maxNameLength} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/[^\x00-\x7f]/.test(name)) {
    const ascii = domainToASCII(name);
    return problem(
      ascii === ''
        ? 'Not a valid internationalised domain name'
        : `Unicode names must be given in their IDNA (ASCII) form: ${ascii}`,
    );
  }
  const labels = name.split('.');
  if (labels.length < 2) return problem('A single label is not a domain name: add its parent (example.com)');
  for (const label of labels) {
    if (!labelPattern.test(label))
      return problem(
        `Label "${label}" must be 1–63 letters, digits or hyphens, not starting or ending with a hyphen`,
      );
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? '')) return problem('The last label cannot be all digits');
  if (labels.some((label) => label.startsWith('xn--')) && domainToASCII(name) !== name)
    return problem('A label starting with xn-- is not valid IDNA');
  return [];
}
