import type { FunctionComponent } from 'preact';
import type { Route } from '../lib/router.js';
import type { Access } from '../lib/session.js';
import { FleetPage } from './fleet.js';
import { Placeholder } from './placeholder.js';
import { RobotPage } from './robot.js';
import { VehiclePage } from './vehicle.js';

/** What every page gets: the route (its params and query) and who is looking. */
export interface PageProps {
  route: Route;
  access: Access;
}

export interface PageEntry {
  /** The route's first segment. */
  page: string;
  /** In the navigation, when it is a section of its own (an entity page is reached from others). */
  nav?: string;
  component: FunctionComponent<PageProps>;
}

const placeholder =
  (title: string): FunctionComponent<PageProps> =>
  () => <Placeholder title={title} />;

/** The pages, in navigation order; the first is the landing page. */
export const PAGES: readonly PageEntry[] = [
  { page: 'incidents', nav: 'Incidents', component: placeholder('Incidents') },
  { page: 'fleet', nav: 'Fleet', component: FleetPage },
  { page: 'events', nav: 'Live events', component: placeholder('Live events') },
  { page: 'silences', nav: 'Silences', component: placeholder('Silences') },
  { page: 'delivery', nav: 'Delivery', component: placeholder('Receivers and dead letters') },
  { page: 'vehicle', component: VehiclePage },
  { page: 'robot', component: RobotPage },
];
