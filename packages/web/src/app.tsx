import { useEffect, useState } from 'preact/hooks';
import { Permission } from '@parley/protocol';
import { connState, stoppedBy } from './lib/gateway.js';
import { get, sessionLost, throttled } from './lib/api.js';
import { match, navigate, onLinkClick, path } from './lib/router.js';
import { PHONE, WIDE } from './lib/media.js';
import type { Guild, User } from './lib/types.js';
import { holds } from './lib/permissions.js';
import { Invite, Login, Register } from './screens/auth.js';
import { BotDetail, BotsPage } from './screens/bots.js';
import {
  ChannelView,
  DmView,
  Empty,
  guildNames,
  managesGuild,
  MembersPanel,
} from './screens/chat.js';
import { CreateGuild, GuildAdmin } from './screens/guild-admin.js';
import { SettingsPage } from './screens/settings.js';
import { PinsButton } from './screens/pins-panel.js';
import {
  dms,
  endSession,
  guildList,
  guilds,
  logout,
  lostGuild,
  me,
  members,
  mentionCount,
  startSession,
  synced,
  unread,
} from './state/store.js';
import { Avatar, Spinner, Toasts } from './ui/kit.js';
import { Icon } from './ui/icons.js';
import { isOffline, Offline, reloadWhenOnline } from './ui/offline.js';
import { dmMentions, guildMentions, MentionBadge, tabTitle, totalMentions } from './ui/badges.js';
import { NotifyMenu } from './ui/notify-menu.js';
import { SearchBox } from './screens/search.js';

const PUBLIC = ['/login', '/register'];

export function App() {
  const [checked, setChecked] = useState(false);
  const [offline, setOffline] = useState(false);
  const p = path.value;

  useEffect(() => {
    // A session cookie (D47) may already be there: ask who we are.
    get<User>('/app/v1/users/@me', { anonymous: true })
      .then((u) => startSession(u))
      .catch((x: unknown) => {
        // no session: the login screen; no network (D66 offline shell): say so
        if (isOffline(x)) {
          setOffline(true);
          reloadWhenOnline();
        }
      })
      .finally(() => setChecked(true));
  }, []);

  useEffect(() => {
    if (!sessionLost.value) return;
    sessionLost.value = false;
    if (!me.value) return;
    endSession();
    navigate('/login', true);
  }, [sessionLost.value]);

  if (!checked)
    return (
      <div class="splash">
        <Spinner />
      </div>
    );

  if (offline) return <Offline />;

  const invite = match('/invite/:code', p);
  let page;
  if (invite) page = <Invite code={invite['code'] ?? ''} />;
  else if (!me.value) page = p.startsWith('/register') ? <Register /> : <Login />;
  else if (PUBLIC.some((x) => p.startsWith(x))) {
    queueMicrotask(() => navigate('/', true));
    page = null;
  } else if (!synced.value)
    page = (
      <div class="splash" role="status">
        <Spinner label="Connecting" />
        <p>Connecting…</p>
      </div>
    );
  else page = <Shell />;
  return (
    <>
      {page}
      <Toasts />
    </>
  );
}

function Rail() {
  const p = path.value;
  const unreadDm = dms.value.some((d) => unread(d.channelId));
  return (
    <nav class="rail" aria-label="Guilds">
      <a
        href="/dm"
        class={`rail-btn${p.startsWith('/dm') ? ' on' : ''}`}
        aria-label="Direct messages"
        title="Direct messages"
        onClick={(e) => onLinkClick(e, '/dm')}
      >
        <Icon name="chat" size={22} />
        {unreadDm && dmMentions.value === 0 && <span class="dot" aria-label="unread" />}
        <MentionBadge count={dmMentions.value} />
      </a>
      <hr />
      {guildList.value.map((g) => {
        const on = p.startsWith(`/g/${g.id}/`) || p === `/g/${g.id}`;
        const hasUnread = g.channels.some((c) => unread(c.id));
        const gm = guildMentions(g);
        return (
          <a
            key={g.id}
            href={`/g/${g.id}`}
            class={`rail-btn guild${on ? ' on' : ''}`}
            aria-label={`${g.name}${hasUnread ? ' (unread)' : ''}`}
            title={g.name}
            aria-current={on ? 'page' : undefined}
            onClick={(e) => onLinkClick(e, `/g/${g.id}`)}
          >
            <Avatar name={g.name} id={g.id} size={40} />
            {hasUnread && gm === 0 && <span class="dot" aria-hidden="true" />}
            <MentionBadge count={gm} />
          </a>
        );
      })}
      <a
        href="/new"
        class={`rail-btn add${p === '/new' ? ' on' : ''}`}
        aria-label="Create a guild"
        title="Create a guild"
        onClick={(e) => onLinkClick(e, '/new')}
      >
        <Icon name="plus" size={22} />
      </a>
      <div class="rail-bottom">
        <a
          href="/bots"
          class={`rail-btn${p.startsWith('/bots') ? ' on' : ''}`}
          aria-label="My bots"
          title="My bots"
          onClick={(e) => onLinkClick(e, '/bots')}
        >
          <Icon name="bot" size={22} />
        </a>
        <a
          href="/settings"
          class={`rail-btn${p.startsWith('/settings') ? ' on' : ''}`}
          aria-label="Settings"
          title="Settings"
          onClick={(e) => onLinkClick(e, '/settings')}
        >
          <Icon name="gear" size={22} />
        </a>
      </div>
    </nav>
  );
}

function ChannelList({ guild, current }: { guild: Guild; current: number | undefined }) {
  return (
    <>
      <header class="sidebar-head">
        <h2 title={guild.name}>{guild.name}</h2>
        <NotifyMenu target={{ guildId: guild.id }} name={guild.name} />
        {managesGuild(guild) && (
          <a
            href={`/g/${guild.id}/settings`}
            class="icon-btn"
            aria-label="Guild settings"
            title="Guild settings"
            onClick={(e) => onLinkClick(e, `/g/${guild.id}/settings`)}
          >
            <Icon name="gear" size={18} />
          </a>
        )}
      </header>
      <nav aria-label="Channels">
        <ul class="nav-list">
          {guild.channels.map((c) => {
            const u = unread(c.id) && c.id !== current;
            const mc = c.id === current ? 0 : mentionCount(c.id);
            return (
              <li key={c.id}>
                <a
                  href={`/g/${guild.id}/${c.id}`}
                  class={`nav-item${c.id === current ? ' on' : ''}${u ? ' unread' : ''}`}
                  aria-current={c.id === current ? 'page' : undefined}
                  onClick={(e) => onLinkClick(e, `/g/${guild.id}/${c.id}`)}
                >
                  <Icon name="hash" size={16} />
                  <span class="nav-label">{c.name}</span>
                  {u && mc === 0 && <span class="dot" aria-label="unread" />}
                  <MentionBadge count={mc} />
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
    </>
  );
}

function DmList({ current }: { current: number | undefined }) {
  return (
    <>
      <header class="sidebar-head">
        <h2>Direct messages</h2>
      </header>
      <nav aria-label="Direct messages">
        {dms.value.length === 0 && (
          <p class="muted small pad">Open someone from a guild's member list to message them.</p>
        )}
        <ul class="nav-list">
          {dms.value.map((d) => {
            const u = unread(d.channelId) && d.channelId !== current;
            const mc = d.channelId === current ? 0 : mentionCount(d.channelId);
            return (
              <li key={d.channelId}>
                <a
                  href={`/dm/${d.channelId}`}
                  class={`nav-item${d.channelId === current ? ' on' : ''}${u ? ' unread' : ''}`}
                  aria-current={d.channelId === current ? 'page' : undefined}
                  onClick={(e) => onLinkClick(e, `/dm/${d.channelId}`)}
                >
                  <Avatar
                    name={d.recipient.name}
                    id={d.recipient.id}
                    url={d.recipient.avatar}
                    size={24}
                  />
                  <span class="nav-label">{d.recipient.name}</span>
                  {d.recipient.isBot && <span class="tag">BOT</span>}
                  {u && mc === 0 && <span class="dot" aria-label="unread" />}
                  <MentionBadge count={mc} />
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
    </>
  );
}

function ConnectionBanner() {
  const s = connState.value;
  if (s === 'closed' && stoppedBy.value === 'too-many-connections')
    return (
      <div class="conn-banner" role="alert">
        Disconnected: you have too many Parley tabs or windows open (16 at most).{' '}
        <button type="button" class="btn small" onClick={() => location.reload()}>
          Reconnect
        </button>
      </div>
    );
  if (s === 'reconnecting')
    return (
      <div class="conn-banner" role="status">
        Connection lost — reconnecting…
      </div>
    );
  if (throttled.value)
    return (
      <div class="conn-banner calm" role="status">
        Slowing down for a moment (rate limit)…
      </div>
    );
  return null;
}

function Shell() {
  const p = path.value;
  const [drawer, setDrawer] = useState(false);
  const [showMembers, setShowMembers] = useState(() => matchMedia(WIDE).matches);
  useEffect(() => setDrawer(false), [p]);
  useEffect(() => {
    // The layout follows the window, not only the width it had at load: a window narrowed to a
    // phone's width closes the member list (there it would cover the chat) and the drawer;
    // widened again, the member list comes back beside the chat.
    const wide = matchMedia(WIDE);
    const phone = matchMedia(PHONE);
    const onWide = () => setShowMembers(wide.matches);
    const onPhone = () => {
      if (!phone.matches) setDrawer(false);
    };
    wide.addEventListener('change', onWide);
    phone.addEventListener('change', onPhone);
    return () => {
      wide.removeEventListener('change', onWide);
      phone.removeEventListener('change', onPhone);
    };
  }, []);
  useEffect(() => {
    const esc = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setDrawer(false);
    };
    addEventListener('keydown', esc);
    return () => removeEventListener('keydown', esc);
  }, []);

  const gSettings = match('/g/:guildId/settings', p);
  const gChan = gSettings ? undefined : match('/g/:guildId/:channelId', p);
  const gOnly = match('/g/:guildId', p);
  const dmChan = match('/dm/:channelId', p);
  const botMatch = match('/bots/:botId', p);
  const guildId = Number(gSettings?.['guildId'] ?? gChan?.['guildId'] ?? gOnly?.['guildId'] ?? NaN);
  const guild = guilds.value.get(guildId);

  let title = 'Parley';
  let main;
  let side;
  if (gSettings || gChan || gOnly) {
    if (!guild) {
      main = (
        <Empty
          text={
            lostGuild.value
              ? `You are no longer a member of ${lostGuild.value}.`
              : 'This guild is not one of yours (or it no longer exists).'
          }
        />
      );
    } else if (gSettings) {
      title = `${guild.name} settings`;
      side = <ChannelList guild={guild} current={undefined} />;
      main = <GuildAdmin guild={guild} />;
    } else {
      const first = guild.channels[0];
      const cid = Number(gChan?.['channelId'] ?? first?.id);
      if (!gChan && first) queueMicrotask(() => navigate(`/g/${guild.id}/${first.id}`, true));
      const c = guild.channels.find((x) => x.id === cid);
      title = c ? `#${c.name}` : guild.name;
      side = <ChannelList guild={guild} current={cid} />;
      main = c ? (
        <ChannelView key={c.id} guild={guild} channelId={c.id} showMembers={showMembers} />
      ) : (
        <Empty text="No channel here yet." />
      );
    }
  } else if (p.startsWith('/dm')) {
    const cid = dmChan ? Number(dmChan['channelId']) : undefined;
    side = <DmList current={cid} />;
    const dm = dms.value.find((d) => d.channelId === cid);
    title = dm ? dm.recipient.name : 'Direct messages';
    main = cid ? <DmView key={cid} channelId={cid} /> : <Empty text="Choose a conversation." />;
  } else if (botMatch) {
    title = 'My bots';
    main = <BotDetail botId={Number(botMatch['botId'])} />;
  } else if (p.startsWith('/bots')) {
    title = 'My bots';
    main = <BotsPage />;
  } else if (p.startsWith('/settings')) {
    title = 'Settings';
    main = <SettingsPage />;
  } else if (p === '/new') {
    title = 'Create a guild';
    main = <CreateGuild />;
  } else {
    const g = guildList.value[0];
    if (g) queueMicrotask(() => navigate(`/g/${g.id}`, true));
    main = (
      <Empty text="You are not in any guild yet. Create one, or open an invite link someone sent you.">
        <button type="button" class="btn primary" onClick={() => navigate('/new')}>
          Create a guild
        </button>
      </Empty>
    );
  }
  // D66: the mentions waiting, in the tab title ("(3) general · Parley")
  const waiting = totalMentions.value;
  useEffect(() => {
    document.title = tabTitle(title, waiting);
  }, [title, waiting]);

  const channel =
    gChan && guild ? guild.channels.find((c) => c.id === Number(gChan['channelId'])) : undefined;
  return (
    <div class={`shell${drawer ? ' drawer-open' : ''}${side ? '' : ' no-side'}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <div class="nav-wrap" id="nav">
        <Rail />
        {side && (
          <aside class="sidebar">
            {side}
            <UserBar />
          </aside>
        )}
      </div>
      {drawer && <div class="scrim" onClick={() => setDrawer(false)} aria-hidden="true" />}
      <main class="content" id="main">
        <header class="topbar">
          <button
            type="button"
            class="icon-btn menu-btn"
            aria-label="Open navigation"
            aria-expanded={drawer}
            aria-controls="nav"
            onClick={() => setDrawer((d) => !d)}
          >
            <Icon name="menu" />
          </button>
          <h1 class="title">{title}</h1>
          {channel?.topic && <p class="topic muted">{channel.topic}</p>}
          {guild && channel && (
            <PinsButton
              key={channel.id}
              channelId={channel.id}
              kind="guild"
              canPin={holds(guild, Permission.MANAGE_MESSAGES)}
              names={guildNames(guild, members.value.get(guild.id) ?? [])}
            />
          )}
          {dmChan && (
            <PinsButton
              key={dmChan['channelId']}
              channelId={Number(dmChan['channelId'])}
              kind="dm"
              canPin
            />
          )}
          {channel && (
            <NotifyMenu
              target={{ channelId: channel.id }}
              inherit={{ guildId: channel.guildId }}
              name={`#${channel.name}`}
            />
          )}
          {guild && gChan && <SearchBox guild={guild} />}
          {guild && gChan && (
            <button
              type="button"
              class={`icon-btn${showMembers ? ' on' : ''}`}
              aria-label={showMembers ? 'Hide members' : 'Show members'}
              aria-pressed={showMembers}
              onClick={() => setShowMembers((s) => !s)}
            >
              <Icon name="users" />
            </button>
          )}
        </header>
        <ConnectionBanner />
        <div class="content-row">
          <div class="content-main">{main}</div>
          {guild && gChan && showMembers && <MembersPanel guild={guild} />}
        </div>
      </main>
    </div>
  );
}

function UserBar() {
  const u = me.value;
  if (!u) return null;
  return (
    <div class="userbar">
      <Avatar name={u.name} id={u.id} url={u.avatar} size={28} />
      <span class="member-name">{u.name}</span>
      <button
        type="button"
        class="icon-btn"
        aria-label="Log out"
        title="Log out"
        onClick={() => void logout()}
      >
        <Icon name="logout" size={18} />
      </button>
    </div>
  );
}
