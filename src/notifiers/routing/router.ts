import type { FleetEvent } from '../../events/types.js';
import type { ChildRouteConfig, RootRouteConfig } from './config.js';
import { type Labels, labelsFor, type Tags } from './labels.js';
import { compileMatcher, type Matcher } from './matcher.js';

/**
 * The routing tree (Alertmanager semantics). Every event enters at the root, which matches
 * everything. At each node the children are tried in order, depth-first: a matching child takes
 * the event and the search stops there unless that child has `continue: true`; when no child
 * matches, the node itself is the match. So an event gets at least one match when a root route is
 * configured, and one per `continue`.
 *
 * Route ids are paths of child indexes: the root is `0`, `route.routes[1]` is `0.1`, its first
 * child `0.1.0`. They are part of group keys, so reordering routes starts new groups.
 */

/** Where one route sends an event, with the route's effective (inherited) settings. */
export interface RouteMatch {
  routeId: string;
  receiver: string;
  groupBy: string[];
  /** Milliseconds. */
  groupWait: number;
  groupInterval: number;
  repeatInterval: number;
  sendResolved: boolean;
}

export interface Router {
  /** The matches for an event, in tree order; empty only when no root route is configured. */
  route(event: FleetEvent, tags?: Tags): RouteMatch[];
  /** The same on labels already computed with `labelsFor`. */
  routeLabels(labels: Labels): RouteMatch[];
}

interface Node {
  settings: RouteMatch;
  matcher: Matcher;
  continue: boolean;
  children: Node[];
}

function compileNode(
  config: ChildRouteConfig | RootRouteConfig,
  parent: RouteMatch | undefined,
  routeId: string,
): Node {
  const child = config as ChildRouteConfig;
  const settings: RouteMatch = {
    routeId,
    receiver: config.receiver ?? parent?.receiver ?? '',
    groupBy: [...(config.group_by ?? parent?.groupBy ?? [])],
    groupWait: config.group_wait ?? parent?.groupWait ?? 0,
    groupInterval: config.group_interval ?? parent?.groupInterval ?? 0,
    repeatInterval: config.repeat_interval ?? parent?.repeatInterval ?? 0,
    sendResolved: config.send_resolved ?? parent?.sendResolved ?? true,
  };
  return {
    settings,
    matcher: compileMatcher(parent ? child.match : undefined),
    continue: parent ? child.continue === true : false,
    children: (config.routes ?? []).map((route, index) =>
      compileNode(route, settings, `${routeId}.${index}`),
    ),
  };
}

function walk(node: Node, labels: Labels, out: RouteMatch[]): void {
  const before = out.length;
  for (const child of node.children) {
    if (!child.matcher.matchesLabels(labels)) continue;
    walk(child, labels, out);
    if (!child.continue) break;
  }
  if (out.length === before) out.push({ ...node.settings, groupBy: [...node.settings.groupBy] });
}

/** Compiles the tree once (globs → RegExp, inheritance resolved). No root route → routes nothing. */
export function compileRoutes(config: RootRouteConfig | undefined): Router {
  if (!config) {
    return { route: () => [], routeLabels: () => [] };
  }
  const root = compileNode(config, undefined, '0');
  const routeLabels = (labels: Labels): RouteMatch[] => {
    const out: RouteMatch[] = [];
    walk(root, labels, out);
    return out;
  };
  return {
    routeLabels,
    route: (event, tags = {}) => routeLabels(labelsFor(event, tags)),
  };
}
