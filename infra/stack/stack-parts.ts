import { NestedStack, Validations } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { Route } from '../../shared/platform/http/route.ts';

/**
 * The nested stack a route's function lives in: the first segment of its path (`/message/add-1.0`
 * → `Message`, `/domain/dkim/status-1.0` → `Domain`); the service's top-level routes (`/health`,
 * `/keepalive-1.0`, `/openapi.json`) share `Service`. A route never moves between parts when others
 * are added, so a deploy updates its function in place.
 */
export function routePartOf(route: Pick<Route, 'path'>): string {
  const segments = route.path.split('/').filter((segment) => segment !== '');
  if (segments.length < 2) return 'Service';
  const first = segments[0] as string;
  return (
    first.charAt(0).toUpperCase() + first.slice(1).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
  );
}

/** Every worker (queue consumers, stream readers, the dispatcher, SES events) shares one part. */
export const workerPart = 'Workers';

/**
 * The nested stacks of one deployment, created on first use: `Functions<Part>` per route group and
 * for the workers, and `Api` for the REST API. Each holds a bounded share of the resources, so no
 * template nears CloudFormation's per-stack limits (docs/deploy.md, "Stacks and limits"), while
 * `cdk deploy` still deploys one stack.
 */
export class StackParts {
  private readonly parts = new Map<string, NestedStack>();
  private readonly scope: Construct;

  constructor(scope: Construct) {
    this.scope = scope;
  }

  functions(part: string): NestedStack {
    return this.part(`Functions${part}`, `svc-mail functions: ${part}`);
  }

  api(): NestedStack {
    const created = this.parts.has('Api');
    const api = this.part('Api', 'svc-mail REST API: resources, methods, stage and gateway responses');
    if (created) return api;
    // CloudFormation validation guesses passwords from parameter names: CDK names the one that passes
    // webhook-rotate-secret's function ARN after the function, "secret" included.
    Validations.of(api).acknowledge({
      id: 'CloudFormation-Validate::W2509',
      reason:
        'Parameters of this nested stack carry function ARNs, never a secret; a route id holds the word "secret".',
    });
    return api;
  }

  submission(): NestedStack {
    return this.part('SmtpSubmission', 'svc-mail SMTP submission: VPC, Fargate service and load balancer');
  }

  all(): NestedStack[] {
    return [...this.parts.values()];
  }

  private part(id: string, description: string): NestedStack {
    let part = this.parts.get(id);
    if (part === undefined) {
      part = new NestedStack(this.scope, id, { description });
      this.parts.set(id, part);
    }
    return part;
  }
}
