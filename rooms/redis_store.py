"""The shared room store: Redis, for several app servers behind one link.

Keys (``prefix`` default ``"asl:rooms:"``, so other data can share the database):

- ``{prefix}open`` — sorted set of open room codes, scored by expiry (the room limit);
- ``{prefix}{code}`` — hash: ``key`` (SHA-256 of the presenter key), ``created``,
  ``expires``, ``closed``, ``r:{question}`` per revealed question and ``q:{question}``
  per question with answers (so closing finds them); it expires ``TOMBSTONE_S`` after
  the room;
- ``{prefix}{code}:a:{question}`` — hash ``{learner}|{group}`` →
  ``"{option}:{unix time}:{session}"``, one field per answer (``HLEN`` is the question's
  number of answers);
- ``{prefix}{code}:c:{question}`` — hash ``{group}|{option}`` → count;
- ``{prefix}{code}:s:{question}`` — hash ``{session}|{group}`` → the answer field that
  session last wrote (so its answer under another learner id is found and replaced).

The question hashes expire with the room (Redis deletes them at the room's expiry). Every
write is one Lua script, which Redis runs atomically: the room's state, the limit, the
upsert and the counters change together, whichever server sends it. A script's first
write is one Redis refuses when out of memory (``maxmemory``), so a full Redis refuses
the whole call; closing deletes first, so it works even then. Times come from the
caller's clock (servers' clocks agree to far better than the 12-hour scale here).

Keys a script computes (closing deletes each question's hashes) are not declared to
Redis, so this is for a single Redis server (or a primary with replicas), not Redis
Cluster.

The client fails fast: short connect and read timeouts, one immediate retry (which also
reconnects after Redis restarted). Any Redis error becomes ``StoreUnavailable``. URL
options override the defaults, e.g. ``redis://host:6379/0?socket_timeout=5``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from rooms.store import (
    MAX_ANSWERS,
    MAX_OPEN_ROOMS,
    MAX_OPTIONS,
    TOMBSTONE_S,
    RoomRecord,
    RoomStore,
    StoreUnavailable,
)

__all__ = ["RedisStore"]

# The state rules of rooms.store.state_of, in Lua: returns nil (no record) or the state.
_STATE = """
local function room_state(meta, now)
  local expires = tonumber(meta[1])
  if not expires or expires + tonumber(ARGV[1]) <= now then return nil end
  if meta[2] == '1' then return 'closed' end
  if expires <= now then return 'expired' end
  return 'open'
end
"""

# KEYS: open set, room. ARGV: tombstone, now, code, key hash, expires, max rooms,
# room record expiry (ms).
_OPEN = """
local now = tonumber(ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then return 'taken' end
if redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[2], '+inf') >= tonumber(ARGV[6]) then
  return 'full_rooms'
end
redis.call('HSET', KEYS[2], 'key', ARGV[4], 'created', ARGV[2], 'expires', ARGV[5], 'closed', '0')
redis.call('PEXPIREAT', KEYS[2], ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[5], ARGV[3])
return 'ok'
"""

# KEYS: room, counts. ARGV: the group's count fields. Read-only and atomic (a MULTI
# would be refused by a Redis out of memory; a script that only reads is not).
_COUNTS = """
return {redis.call('HGETALL', KEYS[1]), redis.call('HMGET', KEYS[2], unpack(ARGV))}
"""

# KEYS: room, answers. ARGV: the answer's field (learner|group).
_HAS_ANSWER = """
return {redis.call('HGETALL', KEYS[1]), redis.call('HEXISTS', KEYS[2], ARGV[1])}
"""

# KEYS: room, answers, counts, sessions. ARGV: tombstone, now, question, group, answer
# field, option, stored value, max answers, session ('' for none). The answers expire
# with the room.
_ANSWER = (
    _STATE
    + """
local now = tonumber(ARGV[2])
local meta = redis.call('HMGET', KEYS[1], 'expires', 'closed')
local state = room_state(meta, now)
if state ~= 'open' then return state or 'unknown' end
local expire_at = string.format('%d', math.floor(tonumber(meta[1]) * 1000))
if ARGV[9] ~= '' then
  -- this session's answer under another learner id gives way
  local mine = ARGV[9] .. '|' .. ARGV[4]
  local before = redis.call('HGET', KEYS[4], mine)
  if before and before ~= ARGV[5] then
    local given = redis.call('HGET', KEYS[2], before)
    if given and string.match(given, '^%d+:%d+:(.*)$') == ARGV[9] then
      redis.call('HINCRBY', KEYS[3], ARGV[4] .. '|' .. string.match(given, '^%d+'), -1)
      redis.call('HDEL', KEYS[2], before)
    end
  end
  redis.call('HSET', KEYS[4], mine, ARGV[5])
  redis.call('PEXPIREAT', KEYS[4], expire_at)
end
local old = redis.call('HGET', KEYS[2], ARGV[5])
if old then
  local was = string.match(old, '^%d+')
  if was ~= ARGV[6] then
    redis.call('HINCRBY', KEYS[3], ARGV[4] .. '|' .. was, -1)
    redis.call('HINCRBY', KEYS[3], ARGV[4] .. '|' .. ARGV[6], 1)
  end
else
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[8]) then return 'full_answers' end
  redis.call('HINCRBY', KEYS[3], ARGV[4] .. '|' .. ARGV[6], 1)
  redis.call('HSET', KEYS[1], 'q:' .. ARGV[3], '1')
end
redis.call('HSET', KEYS[2], ARGV[5], ARGV[7])
redis.call('PEXPIREAT', KEYS[2], expire_at)
redis.call('PEXPIREAT', KEYS[3], expire_at)
return 'ok'
"""
)

# KEYS: room, open set. ARGV: tombstone, now, action, key hash, question, code,
# prefix of the room's question hashes ({prefix}{code}:).
_ACT = (
    _STATE
    + """
local now = tonumber(ARGV[2])
local meta = redis.call('HMGET', KEYS[1], 'expires', 'closed', 'key')
local state = room_state(meta, now)
if not state then return 'unknown' end
if state == 'expired' or (state == 'closed' and ARGV[3] ~= 'close') then return state end
if ARGV[4] == '' or ARGV[4] ~= meta[3] then return 'wrong_key' end
if state == 'closed' then return 'ok' end
local q = ARGV[5]
if ARGV[3] == 'reveal' then
  redis.call('HSET', KEYS[1], 'r:' .. q, '1')
elseif ARGV[3] == 'reset' then
  redis.call('DEL', ARGV[7] .. 'a:' .. q, ARGV[7] .. 'c:' .. q, ARGV[7] .. 's:' .. q)
  redis.call('HDEL', KEYS[1], 'r:' .. q, 'q:' .. q)
elseif ARGV[3] == 'close' then
  redis.call('ZREM', KEYS[2], ARGV[6])
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    local kind, name = string.sub(field, 1, 2), string.sub(field, 3)
    if kind == 'q:' then
      local answers = ARGV[7] .. 'a:' .. name
      redis.call('DEL', answers, ARGV[7] .. 'c:' .. name, ARGV[7] .. 's:' .. name)
      redis.call('HDEL', KEYS[1], field)
    elseif kind == 'r:' then
      redis.call('HDEL', KEYS[1], field)
    end
  end
  redis.call('HSET', KEYS[1], 'closed', '1')
else
  return redis.error_reply('unknown action ' .. ARGV[3])
end
return 'ok'
"""
)


def _ms(t: float) -> int:
    return int(t * 1000)


class RedisStore(RoomStore):
    """Rooms in the Redis at ``url`` (``redis://`` or ``rediss://``), under ``prefix``.

    Nothing is connected before the first call. ``connect_timeout_s`` and
    ``socket_timeout_s`` bound each attempt; one failed attempt is retried at once, so a
    call on a dead or silent Redis raises ``StoreUnavailable`` within about twice their
    sum.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "asl:rooms:",
        clock: Callable[[], float] = time.time,
        connect_timeout_s: float = 1.0,
        socket_timeout_s: float = 1.0,
    ) -> None:
        super().__init__(clock=clock)
        self.url = url
        self.prefix = prefix
        self.client = redis.Redis.from_url(
            url,
            socket_connect_timeout=connect_timeout_s,
            socket_timeout=socket_timeout_s,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        self._open_script = self.client.register_script(_OPEN)
        self._answer_script = self.client.register_script(_ANSWER)
        self._counts_script = self.client.register_script(_COUNTS)
        self._has_answer_script = self.client.register_script(_HAS_ANSWER)
        self._act_script = self.client.register_script(_ACT)

    def __repr__(self) -> str:
        where = self.client.connection_pool.connection_kwargs
        return f"RedisStore({where.get('host')}:{where.get('port')}, prefix={self.prefix!r})"

    def close_connection(self) -> None:
        """Close the client's connections (the next call opens them again)."""
        self.client.close()

    def _call(self, fn: Callable[[], object]):
        try:
            return fn()
        except redis.RedisError as exc:
            raise StoreUnavailable(f"room store {self!r}: {type(exc).__name__}: {exc}") from exc

    def _room_key(self, code: str) -> str:
        return f"{self.prefix}{code}"

    # --- the hooks -----------------------------------------------------------------
    def _open(self, code: str, key_hash: str, now: float, expires: float) -> str:
        keys = [f"{self.prefix}open", self._room_key(code)]
        args = [TOMBSTONE_S, repr(now), code, key_hash, repr(expires), MAX_OPEN_ROOMS]
        args.append(_ms(expires + TOMBSTONE_S))
        return self._call(lambda: self._open_script(keys=keys, args=args))

    @staticmethod
    def _record(code: str, meta: dict[str, str]) -> RoomRecord | None:
        if "expires" not in meta:
            return None
        return RoomRecord(
            code=code,
            key_hash=meta.get("key", ""),
            created=float(meta.get("created", "0")),
            expires=float(meta["expires"]),
            closed=meta.get("closed") == "1",
            revealed=frozenset(f[2:] for f in meta if f.startswith("r:")),
        )

    def _room(self, code: str) -> RoomRecord | None:
        return self._record(code, self._call(lambda: self.client.hgetall(self._room_key(code))))

    def _answer(
        self,
        code: str,
        question: str,
        group: str,
        learner: str,
        session: str,
        option: int,
        now: float,
    ) -> str:
        room = self._room_key(code)
        keys = [room, f"{room}:a:{question}", f"{room}:c:{question}", f"{room}:s:{question}"]
        args = [
            TOMBSTONE_S,
            repr(now),
            question,
            group,
            f"{learner}|{group}",
            str(option),
            f"{option}:{int(now)}:{session}",
            MAX_ANSWERS,
            session,
        ]
        return self._call(lambda: self._answer_script(keys=keys, args=args))

    def _counts(self, code: str, question: str, group: str) -> tuple[RoomRecord | None, dict]:
        room = self._room_key(code)
        fields = [f"{group}|{o}" for o in range(MAX_OPTIONS)]

        keys = [room, f"{room}:c:{question}"]
        flat, counts = self._call(lambda: self._counts_script(keys=keys, args=fields))
        meta = dict(zip(flat[::2], flat[1::2], strict=True))
        by_option = {o: int(n) for o, n in enumerate(counts) if n is not None}
        return self._record(code, meta), by_option

    def _has_answer(
        self, code: str, question: str, group: str, learner: str
    ) -> tuple[RoomRecord | None, bool]:
        room = self._room_key(code)
        keys, args = [room, f"{room}:a:{question}"], [f"{learner}|{group}"]
        flat, found = self._call(lambda: self._has_answer_script(keys=keys, args=args))
        meta = dict(zip(flat[::2], flat[1::2], strict=True))
        return self._record(code, meta), bool(found)

    def _act(self, action: str, code: str, key_hash: str, question: str | None, now: float) -> str:
        room = self._room_key(code)
        keys = [room, f"{self.prefix}open"]
        args = [TOMBSTONE_S, repr(now), action, key_hash, question or "", code, f"{room}:"]
        return self._call(lambda: self._act_script(keys=keys, args=args))
