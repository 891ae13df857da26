-- The world of recovery-under-load: EC2's DropletWorkflow Manager (DWFM), Network Manager
-- and the NLB health checker in us-east-1, as they stand at 02:25 PDT on Monday 20 October
-- 2025, the minute DynamoDB's DNS was restored.
--
-- From the record (aws-summary, secondary): each DWFM host keeps a lease on every droplet it
-- manages and must check in with it every few minutes; those checks needed DynamoDB, so
-- between 23:48 and 02:24 the leases timed out across the fleet, and a droplet without a
-- lease cannot take a launch. Network Manager propagates network state to new instances;
-- NLB's health checker brings new instances into service before their network state has
-- propagated, so "in some cases" checks fail although node and targets are healthy, and
-- automatic AZ DNS failover takes capacity of multi-AZ load balancers out of service.
--
-- Invented for play (source: exercise-assumption): every number below. The fleet's size
-- (the record gives none), 500 droplets a host, a lease of 60 minutes, a lease attempt that
-- times out after 10 minutes, how a host slows down as its queue grows, one launch request
-- a minute per 1,000 droplets, Network Manager's rate, 20 load balancers with a node in each
-- of three zones (60 nodes), which half of them take new instances this morning, and
-- connections failing once no more than two thirds of the nodes are in DNS. Invented too:
-- that a node leaving or re-entering DNS gives Network Manager work (nlb_flip_changes). The
-- record puts the flapping's extra load on NLB's health-check subsystem, not on Network
-- Manager; here that load is what keeps new instances waiting for network, and so keeps the
-- checks failing, until failover is turned off.
--
-- The simulation is set-based: the automation's statements (exercise.yaml) advance every
-- droplet, work item, change and node each simulated minute, and cost grows with the
-- fleet's size, not faster. Change the fleet's size here (fleet.droplets).

-- How big the fleet is and how its parts behave (capacities are not knobs: nobody can make
-- a host faster at 3 a.m.).
CREATE TABLE fleet (
    droplets          INTEGER NOT NULL    -- physical servers: 2,000 or more (fewer leave the
        CONSTRAINT a_fleet_of_at_least_2000_droplets CHECK (droplets >= 2000),  -- customers
                                          -- no terminations a minute: the story needs them)
    droplets_per_host INTEGER NOT NULL,   -- droplets one DWFM host manages
    lease_minutes     INTEGER NOT NULL,   -- how long an established lease lasts
    work_timeout      INTEGER NOT NULL,   -- a lease attempt older than this is wasted
    host_rate         INTEGER NOT NULL,   -- work items a host finishes a minute, queue empty
    host_knee         INTEGER NOT NULL,   -- queue length at which a host runs at half speed
    netmgr_rate       INTEGER NOT NULL,   -- network changes propagated a minute, no backlog
    netmgr_knee       INTEGER NOT NULL,   -- backlog at which Network Manager runs at half speed
    launches          INTEGER NOT NULL,   -- new launch requests customers make a minute
    terminations      INTEGER NOT NULL,   -- instances customers terminate a minute
    nlb_nodes         INTEGER NOT NULL,   -- NLB nodes: a load balancer has one in each of
                                          -- three zones
    nlb_floor         INTEGER NOT NULL,   -- NLB nodes that must stay in DNS (fewer, and
                                          -- connections fail)
    nlb_grace         INTEGER NOT NULL,   -- minutes a target may lack network before its
                                          -- node's health check fails
    nlb_flip_changes  INTEGER NOT NULL    -- changes Network Manager must propagate to the
                                          -- appliances each time a node leaves or re-enters
                                          -- DNS (the exercise's assumption, not the record's)
);
-- One number sizes the fleet; the rates of launches, terminations and Network Manager grow
-- with it, so a small fleet and a big one tell the same story. Network Manager propagates
-- size/70 changes a minute (no backlog): fast enough that the hosts restarted first bring
-- a backlog it works off within the health checks' grace when they take launches again
-- (05:02), and slow enough that the last ones (05:28) bring a wait past it. Only the load
-- balancers that take new instances (half) flap, so at worst half the nodes are out of DNS
-- (30 of 60): below the floor (more than two thirds, 41 of 60), not empty. A flip costs 74
-- changes: the flapping of that half then holds Network Manager's backlog at about half an
-- hour of work, which takes it about an hour to work off once failover goes off (AWS: 09:36
-- to 10:36). Played as AWS did, the latency begins 06:21 at 4,000 droplets and 06:29 at
-- 20,000 and ends 10:35 and 10:28; 70 changes a flip and it begins late (06:57 at 20,000),
-- 84 and early (05:53). A cap on failover's removals at a tenth of the nodes keeps the flips
-- few enough that Network Manager catches up (issue 57's notes).
INSERT INTO fleet
SELECT size, 500, 60, 10, 30, 100, size / 70, size / 4, size / 1000, size / 2000,
       size * 3 / 1000, size * 2 / 1000 + 1, 3, 74
FROM (SELECT 20000 AS size) AS s;

-- The knobs the responders have. 0 means "no limit" for the two throttles.
CREATE TABLE knob (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL,
    note  TEXT NOT NULL
);
INSERT INTO knob (name, value, note) VALUES
    ('dwfm-intake-per-host', 0, 'new work items each DWFM host admits a minute (0: no limit)'),
    ('launch-limit', 0, 'percent of the usual launch requests the EC2 API admits a minute (0: no limit)'),
    ('retry-jitter', 0, 'customers'' SDKs: 0 retry every 5 minutes in step, 1 back off with jitter'),
    ('nlb-auto-failover', 1, 'NLB takes nodes whose health checks fail out of DNS (1 on, 0 off)');

-- DWFM hosts. A host works through its queue oldest first; the longer the queue, the
-- slower it goes (every item it holds costs it bookkeeping). Set restart = 1 to restart a
-- host: at the next minute its queue is cleared.
CREATE TABLE dwfm_host (
    id       INTEGER PRIMARY KEY,
    restart  INTEGER NOT NULL DEFAULT 0 CHECK (restart IN (0, 1)),
    restarts INTEGER NOT NULL DEFAULT 0
);

-- Droplets. A droplet holds a lease while lease_until >= the current minute.
-- queued is 1 while a lease attempt for it is in a queue (kept by DWFM's statements, set
-- based: dwfm-sweep-mark, dwfm-unmark, dwfm-restart-unmark in exercise.yaml).
CREATE TABLE droplet (
    id          INTEGER PRIMARY KEY,
    host        INTEGER NOT NULL REFERENCES dwfm_host (id),
    lease_until INTEGER NOT NULL,
    queued      INTEGER NOT NULL DEFAULT 0 CHECK (queued IN (0, 1))
);
CREATE INDEX droplet_lease ON droplet (lease_until);
-- Each host's droplets, first lease to run out first: DWFM's sweep reads a host's droplets
-- due from it, and whether a host is still re-leasing (more than 5% of its droplets without
-- a lease) from at most its first 5% and one. (queued is in no index: marking a droplet
-- queued and back, thousands a minute, costs no index a write; three indexes with
-- lease_until made the outage's UPDATE of every lease at 02:25 overrun its 2 s at 100,000.)
CREATE INDEX droplet_host_lease ON droplet (host, lease_until);

-- DWFM's work queue: lease attempts and launches, per host. taken_at is set the minute a
-- host gets to the item; an item taken more than work_timeout minutes after it was queued
-- has timed out and its work is wasted.
CREATE TABLE dwfm_work (
    id        INTEGER PRIMARY KEY,
    host      INTEGER NOT NULL,
    droplet   INTEGER NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('lease', 'launch')),
    queued_at INTEGER NOT NULL,
    request   INTEGER,
    taken_at  INTEGER
);
CREATE INDEX dwfm_work_host ON dwfm_work (host, id);
CREATE INDEX dwfm_work_droplet ON dwfm_work (droplet);
-- (taken_at, host): the waiting items of each host, counted and walked without the table
-- (DWFM's serve step reads them every minute; with host, its cost follows what is taken).
CREATE INDEX dwfm_work_taken ON dwfm_work (taken_at, host);
CREATE INDEX dwfm_work_queued ON dwfm_work (queued_at);

-- Customers' launch requests. state: waiting (for the API, retrying at next_try), queued
-- (in a DWFM queue), placed (an instance is running), gave-up (after 8 tries).
CREATE TABLE launch_request (
    id        INTEGER PRIMARY KEY,
    asked_at  INTEGER NOT NULL,
    next_try  INTEGER NOT NULL,
    attempts  INTEGER NOT NULL DEFAULT 0,
    throttled INTEGER NOT NULL DEFAULT 0,
    state     TEXT NOT NULL CHECK (state IN ('waiting', 'queued', 'placed', 'gave-up')),
    placed_at INTEGER,
    throttled_at INTEGER          -- the last minute the API refused it
);
CREATE INDEX launch_throttled ON launch_request (throttled_at);
CREATE INDEX launch_waiting ON launch_request (state, next_try);
CREATE INDEX launch_asked ON launch_request (asked_at);

-- Instances launched tonight (those launched before the event are not modelled: they ran
-- throughout, aws-summary). An instance has network once its change has propagated.
CREATE TABLE instance (
    id          INTEGER PRIMARY KEY,
    request     INTEGER NOT NULL,
    droplet     INTEGER NOT NULL,
    launched_at INTEGER NOT NULL,
    net_ready_at INTEGER
);
CREATE INDEX instance_no_net ON instance (launched_at) WHERE net_ready_at IS NULL;
CREATE INDEX instance_launch_time ON instance (launched_at);  -- the no-network harm's window

-- Network Manager's propagation queue: one change per launched or terminated instance. A
-- change reaches a droplet only while that droplet holds a lease.
CREATE TABLE net_change (
    id        INTEGER PRIMARY KEY,
    droplet   INTEGER NOT NULL,
    instance  INTEGER,            -- NULL for a terminated instance's clean-up
    queued_at INTEGER NOT NULL,
    done_at   INTEGER
);
CREATE INDEX net_change_pending ON net_change (queued_at, id) WHERE done_at IS NULL;

-- NLB nodes: multi-AZ load balancers, one node in each of three zones (AZ DNS failover takes
-- a load balancer's node in a zone out of its DNS answer). in_dns: in the DNS answer. A broken
-- node is really down (failover should take it out); check_failed is its last health check.
-- new_targets: the load balancer's targets include instances launched this morning (its
-- customers scale out or deploy), half of them; the others front only instances that ran
-- through the night, whose network never went away, and their checks keep passing
-- (exercise-assumption: the record says health checks failed "in some cases", not which).
CREATE TABLE nlb_node (
    id           INTEGER PRIMARY KEY,
    lb           INTEGER NOT NULL,    -- the load balancer it is a node of
    az           TEXT NOT NULL,
    new_targets  INTEGER NOT NULL DEFAULT 0 CHECK (new_targets IN (0, 1)),
    in_dns       INTEGER NOT NULL DEFAULT 1 CHECK (in_dns IN (0, 1)),
    check_failed INTEGER NOT NULL DEFAULT 0 CHECK (check_failed IN (0, 1)),
    broken       INTEGER NOT NULL DEFAULT 0 CHECK (broken IN (0, 1)),
    removed_at   INTEGER,
    broken_at    INTEGER,             -- the minute it really failed
    changed_at   INTEGER,             -- the last minute it left or re-entered DNS
    flips        INTEGER NOT NULL DEFAULT 0
);

-- Targets: the health checker brings each new instance into service behind a node in DNS of
-- a load balancer that takes new instances.
CREATE TABLE nlb_target (
    instance INTEGER PRIMARY KEY,
    node     INTEGER NOT NULL,
    added_at INTEGER NOT NULL
);
CREATE INDEX nlb_target_node ON nlb_target (node, added_at);

-- What the fleet did each minute (written by the dashboards' automation at the end of the
-- minute; the responders' dashboards and the charts read it).
CREATE TABLE minute_stats (
    minute      INTEGER PRIMARY KEY,  -- minutes since 02:25
    queue       INTEGER NOT NULL,     -- DWFM work items waiting after the minute
    served      INTEGER NOT NULL,     -- items the DWFM hosts got to
    goodput     INTEGER NOT NULL,     -- of those, done in time (a lease or a launch attempt)
    wasted      INTEGER NOT NULL,     -- of those, already timed out: work thrown away
    leased      INTEGER NOT NULL,     -- droplets holding a lease
    admitted    INTEGER NOT NULL,     -- launch requests the EC2 API passed to DWFM
    throttled   INTEGER NOT NULL,     -- launch requests refused: "request limit exceeded"
    launched    INTEGER NOT NULL,     -- instances launched
    failed      INTEGER NOT NULL,     -- launches refused: "insufficient capacity"
    net_backlog INTEGER NOT NULL,     -- network changes waiting for Network Manager
    nlb_in_dns  INTEGER NOT NULL,     -- healthy NLB nodes in DNS
    nlb_failing INTEGER NOT NULL      -- NLB nodes whose last health check failed
);

-- The fleet as a normal night has it: every droplet leased, renewals spread over the hour.
-- (The outage's aftermath, every lease timed out, is the first thing the automation does at
-- 02:25: see the task leases-timed-out.)
WITH RECURSIVE n (i) AS (
    SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT droplets / droplets_per_host FROM fleet)
)
INSERT INTO dwfm_host (id) SELECT i FROM n;

WITH RECURSIVE n (i) AS (
    SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT droplets FROM fleet)
)
INSERT INTO droplet (id, host, lease_until)
SELECT i, 1 + (i - 1) % (SELECT droplets / droplets_per_host FROM fleet),
       1 + ((i - 1) / (SELECT droplets / droplets_per_host FROM fleet)) % 60 FROM n;

WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n
                         WHERE i < (SELECT nlb_nodes FROM fleet))
INSERT INTO nlb_node (id, lb, az, new_targets)
SELECT i, 1 + (i - 1) / 3, 'use1-az' || (1 + (i - 1) % 3), (1 + (i - 1) / 3) % 2 FROM n;

-- Views the responders' dashboards are built on (the checks read the tables, not these).
CREATE VIEW dwfm_queue (host, depth, oldest_wait) AS
    SELECT w.host, count(*), (SELECT coalesce(max(minute), 0) FROM minute_stats) - min(w.queued_at)
    FROM dwfm_work AS w WHERE w.taken_at IS NULL GROUP BY w.host;

CREATE VIEW dashboard (minute, queue, goodput, wasted, leased, launched, throttled,
                       failed, net_backlog, nlb_in_dns) AS
    SELECT minute, queue, goodput, wasted, leased, launched, throttled, failed, net_backlog,
           nlb_in_dns
    FROM minute_stats;

-- When DWFM launches an instance: the request is placed, Network Manager gets a change to
-- propagate, and the health checker brings the instance into service behind a node in DNS.
CREATE TRIGGER instance_launched AFTER INSERT ON instance BEGIN
    UPDATE launch_request SET state = 'placed', placed_at = NEW.launched_at
    WHERE id = NEW.request;
    INSERT INTO net_change (droplet, instance, queued_at)
    VALUES (NEW.droplet, NEW.id, NEW.launched_at);
    INSERT INTO nlb_target (instance, node, added_at)
    SELECT NEW.id, id, NEW.launched_at FROM nlb_node WHERE in_dns = 1 AND new_targets = 1
    ORDER BY id LIMIT 1 OFFSET NEW.id % max(1, (SELECT count(*) FROM nlb_node
                                                WHERE in_dns = 1 AND new_targets = 1));
END;

-- A propagated change gives its instance network.
CREATE TRIGGER network_ready AFTER UPDATE OF done_at ON net_change
WHEN NEW.instance IS NOT NULL AND NEW.done_at IS NOT NULL BEGIN
    UPDATE instance SET net_ready_at = NEW.done_at WHERE id = NEW.instance;
END;

-- Instances customers terminate, a steady trickle through the night (each leaves a change
-- for Network Manager to propagate). The ones terminated between 23:48 and 02:25 are added
-- by the task network-backlog: a change reaches a droplet only while it holds a lease.
WITH RECURSIVE n (i) AS (
    SELECT 0 UNION ALL SELECT i + 1 FROM n
    WHERE i < (SELECT 715 * terminations FROM fleet) - 1
)
INSERT INTO net_change (droplet, queued_at)
SELECT 1 + (i * 7919) % (SELECT droplets FROM fleet), i / (SELECT terminations FROM fleet)
FROM n;
