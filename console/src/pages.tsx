// Every view of the console, one entry each: a new page is one module plus one line here. `nav` entries appear in the menu.
import type { VNode } from 'preact';
import { AdinsertPage } from './pages/ads/detail';
import { AdsPage } from './pages/ads/list';
import { ApiKeysPage } from './pages/api-keys';
import { BrokerChannelsPage } from './pages/broker/channels';
import { PlaylistsPage } from './pages/broker/playlists';
import { SchedulePage } from './pages/broker/schedule';
import { BlueprintsPage } from './pages/live/blueprints';
import { ChannelPage } from './pages/live/channel';
import { WorkflowsPage } from './pages/live/workflows';
import { MetaGroupsPage } from './pages/meta-groups';
import { PlayPage } from './pages/play';
import { StatisticsPage } from './pages/statistics';
import { VodDetailPage } from './pages/vod/detail';
import { VodLibraryPage } from './pages/vod/library';

export interface PageEntry {
  pattern: string;
  /** menu label; absent: reachable by link only */
  nav?: string;
  /** the permission the page's reads need; without it the page is left out of the menu */
  permission?: 'admin';
  render: (params: Record<string, string>, search: URLSearchParams) => VNode;
}

export const PAGES: PageEntry[] = [
  { pattern: '/live/workflows', nav: 'Workflows', render: () => <WorkflowsPage /> },
  { pattern: '/live/blueprints', nav: 'Blueprints', render: () => <BlueprintsPage /> },
  { pattern: '/live/channels/:id', render: (p) => <ChannelPage workflowId={p.id ?? ''} /> },
  { pattern: '/vod', nav: 'Video on demand', render: () => <VodLibraryPage /> },
  { pattern: '/vod/:guid', render: (p) => <VodDetailPage guid={p.guid ?? ''} /> },
  { pattern: '/broker/channels', nav: 'Broker channels', render: () => <BrokerChannelsPage /> },
  { pattern: '/broker/channels/:guid', render: (p) => <SchedulePage guid={p.guid ?? ''} /> },
  { pattern: '/broker/playlists', nav: 'Playlists', render: () => <PlaylistsPage /> },
  { pattern: '/ads', nav: 'Ad insertion', render: () => <AdsPage /> },
  { pattern: '/ads/:guid', render: (p) => <AdinsertPage guid={p.guid ?? ''} /> },
  { pattern: '/api-keys', nav: 'API keys', permission: 'admin', render: () => <ApiKeysPage /> },
  { pattern: '/meta-groups', nav: 'Meta groups', render: () => <MetaGroupsPage /> },
  { pattern: '/statistics', nav: 'Statistics', render: () => <StatisticsPage /> },
  { pattern: '/play', render: (_p, search) => <PlayPage src={search.get('src') ?? ''} /> },
];

export const HOME = '/live/workflows';
