import type { FunctionComponent } from 'preact';
import type { Route } from '../lib/router.js';
import type { Access } from '../lib/session.js';
import { DeliveryPage } from './delivery.js';
import { EventsPage } from './events.js';
import { FleetPage } from './fleet.js';
import { IncidentsPage } from './incidents.js';
import { RobotPage } from './robot.js';
import { SilencesPage } from './silences.js';
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

/** The pages, in navigation order; the first is the landing page (the empty route, `#/`). */
export const PAGES: readonly PageEntry[] = [
  { page: 'incidents', nav: 'Incidents', component: IncidentsPage },
  { page: 'fleet', nav: 'Fleet', component: FleetPage },
  { page: 'events', nav: 'Live events', component: EventsPage },
  { page: 'silences', nav: 'Silences', component: SilencesPage },
  { page: 'delivery', nav: 'Delivery', component: DeliveryPage },
  { page: 'vehicle', component: VehiclePage },
  { page: 'robot', component: RobotPage },
];
