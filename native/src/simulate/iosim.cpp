/* iotuner-iosim: replays the operations of I/O phases on a SimGrid platform (iotuner simulate).
 *
 * Input (a file, or - for stdin): a JSON header on the first line (platform, ranks, nodes, file layout:
 * stripes, first OST, one shared file or a file per process), then one operation per line, in the order
 * the ranks make them (python/iotuner/simulate/trace.py writes it from the hybrid model's counts):
 *   P i                     phase i starts (every rank starts it together)
 *   C seconds               a collective of every rank: they wait for the slowest, then it takes `seconds`
 *   s RANK BYTES PEER       MPI_Isend to PEER          r RANK BYTES PEER   MPI_Irecv from PEER
 *   w RANK N                MPI_Waitall of what RANK posted
 *   W RANK BYTES OFFSET     pwrite at OFFSET           R RANK BYTES OFFSET pread
 *   x RANK NANOSECONDS      RANK's core busy that long (a copy within its own memory: a message to itself)
 *   E                       the phase ends
 * Between two collectives every rank runs its own operations in order; messages are Comms between the ranks'
 * nodes (intra-node: the node's memory link, plus the receiver's copy as an Exec), file calls are Ios on the
 * storage targets their bytes map to (Lustre: stripes over OSTs, each also a Comm to its OSS), plus the
 * client's copy as an Exec. With more ranks than cores and busy polling, every rank is always runnable, so
 * an Exec gets cores/ranks-per-node of a core.
 *
 * Output (stdout): {"phases": [{"time_s", "collective_s", "bytes_written", "bytes_read", "ost_bytes_max",
 * "ost_bytes_mean"}], "activities", "wall_s"}. Errors: one line on stderr, exit status 2. */
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "iotuner/json.h"
}

namespace sg4 = simgrid::s4u;

/* SimGrid 4.0 renamed the platform calls (create_* -> add_*), routes from a host to a star zone's centre,
 * actors made through the Engine and waits through an ActivitySet; 3.32 has only the old names. A star zone
 * made on its own has no network model under 4.0: it is the root zone here. */
#if SIMGRID_VERSION_MAJOR >= 4
#define IOSIM_SG4 1
#endif

namespace {

sg4::NetZone *star_zone(const std::string &name)
{
#ifdef IOSIM_SG4
    return sg4::Engine::get_instance()->get_netzone_root()->add_netzone_star(name);
#else
    return sg4::create_star_zone(name);
#endif
}

sg4::Host *add_host(sg4::NetZone *z, const std::string &name, double speed)
{
#ifdef IOSIM_SG4
    return z->add_host(name, speed);
#else
    return z->create_host(name, speed);
#endif
}

sg4::Link *add_link(sg4::NetZone *z, const std::string &name, double bw)
{
#ifdef IOSIM_SG4
    return z->add_link(name, bw);
#else
    return z->create_link(name, bw);
#endif
}

sg4::Link *add_duplex_link(sg4::NetZone *z, const std::string &name, double bw)
{
#ifdef IOSIM_SG4
    return z->add_split_duplex_link(name, bw);
#else
    return z->create_split_duplex_link(name, bw);
#endif
}

/* a route from host `from` to `to`, or to the star's centre when `to` is null */
void add_route(sg4::NetZone *z, sg4::Host *from, sg4::Host *to, const std::vector<sg4::LinkInRoute> &links,
               bool symmetrical)
{
#ifdef IOSIM_SG4
    if (to) {
        z->add_route(from, to, links, symmetrical);
        return;
    }
    /* 4.0's route between netpoints dereferences a null destination; the one with gateways still takes a
     * star's "to the centre" (deprecated, and the only way to say it in 4.0) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    z->add_route(from->get_netpoint(), nullptr, nullptr, nullptr, links, symmetrical);
#pragma GCC diagnostic pop
#else
    z->add_route(from->get_netpoint(), to ? to->get_netpoint() : nullptr, nullptr, nullptr, links, symmetrical);
#endif
}

sg4::Disk *add_disk(sg4::Host *h, const std::string &name, double read_bw, double write_bw)
{
#ifdef IOSIM_SG4
    return h->add_disk(name, read_bw, write_bw);
#else
    return h->create_disk(name, read_bw, write_bw);
#endif
}

void wait_all(const std::vector<sg4::CommPtr> &comms)
{
#ifdef IOSIM_SG4
    sg4::ActivitySet set;
    for (const auto &c : comms)
        set.push(c);
    set.wait_all();
#else
    sg4::Comm::wait_all(comms);
#endif
}

template <class F> sg4::ActorPtr add_actor(const std::string &name, sg4::Host *h, F code)
{
#ifdef IOSIM_SG4
    return sg4::Engine::get_instance()->add_actor(name, h, std::move(code));
#else
    return sg4::Actor::create(name, h, std::move(code));
#endif
}

} // namespace

namespace {

struct Fail : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum Kind : char { ISEND = 's', IRECV = 'r', WAITALL = 'w', PWRITE = 'W', PREAD = 'R', BUSY = 'x' };

struct Op {
    char kind;
    int rank;
    long long bytes;
    long long arg; /* peer, offset or request count */
};

struct Segment {
    std::vector<Op> ops;     /* sorted by rank, each rank's in its order */
    double collective_s = 0; /* the collective that ends the segment */
};

struct Phase {
    std::vector<Segment> segments;
    long long written = 0, read = 0;
    std::vector<long long> target_bytes; /* per storage target */
};

struct Platform {
    int cores = 1;
    double core_speed = 1e9;
    double copy_bw = 5e9, write_copy_bw = 0, read_copy_bw = 0;
    bool busy_poll = true;
    double mem_bw = 1e10, mem_latency = 1e-6;
    double nic_bw = 0, nic_latency = 0, backbone_bw = 0, backbone_latency = 0;
    double client_bw = 0; /* a node's throughput as a Lustre client, below its NIC's (0: only the NIC) */
    std::string storage = "local";
    int targets = 1, servers = 0;
    double target_write_bw = 1e9, target_read_bw = 1e9, server_bw = 0, server_latency = 0;
    double write_overhead = 0, read_overhead = 0;
    long long stripe_size = 1 << 20;
    int stripe_count = 1, first_target = 0;
    bool per_process = false; /* a file per rank: rank r's file starts r x stripe_count OSTs on */
};

double num(const iot_json *obj, const char *key, double fallback, bool required = false)
{
    const iot_json *v = obj ? iot_json_get(obj, key) : nullptr;
    if (!v || v->type == IOT_JSON_NULL) {
        if (required)
            throw Fail(std::string("header: '") + key + "' is missing");
        return fallback;
    }
    if (v->type != IOT_JSON_NUMBER || !std::isfinite(v->number) || v->number < 0)
        throw Fail(std::string("header: '") + key + "' must be a number >= 0");
    return v->number;
}

struct Input {
    Platform pf;
    int ranks = 0, nodes = 1;
    std::vector<Phase> phases;
};

void read_header(const std::string &line, Input &in)
{
    char err[256];
    iot_json *doc = iot_json_parse(line.data(), line.size(), err, sizeof err);
    if (!doc)
        throw Fail(std::string("header: ") + err);
    try {
        const iot_json *fmt = iot_json_get(doc, "format");
        if (!fmt || fmt->type != IOT_JSON_STRING || std::strcmp(fmt->string, "iotuner-iosim") != 0)
            throw Fail("header: not an iotuner-iosim input (format)");
        in.ranks = (int)num(doc, "ranks", 0, true);
        in.nodes = (int)num(doc, "nodes", 1);
        if (in.ranks < 1 || in.nodes < 1 || in.nodes > in.ranks)
            throw Fail("header: need 1 <= nodes <= ranks");
        const iot_json *p = iot_json_get(doc, "platform");
        if (!p || p->type != IOT_JSON_OBJECT)
            throw Fail("header: 'platform' is missing");
        Platform &pf = in.pf;
        pf.cores = std::max(1, (int)num(p, "cores", 1));
        pf.core_speed = num(p, "core_speed", 1e9);
        pf.copy_bw = num(p, "copy_bw", 0, true);
        pf.write_copy_bw = num(p, "write_copy_bw", 0);
        pf.read_copy_bw = num(p, "read_copy_bw", 0);
        const iot_json *bp = iot_json_get(p, "busy_poll");
        pf.busy_poll = !bp || bp->type != IOT_JSON_BOOL || bp->boolean;
        pf.mem_bw = num(p, "mem_bw", 0, true);
        pf.mem_latency = num(p, "mem_latency", 0);
        pf.nic_bw = num(p, "nic_bw", 0);
        pf.nic_latency = num(p, "nic_latency", 0);
        pf.client_bw = num(p, "client_bw", 0);
        pf.backbone_bw = num(p, "backbone_bw", 0);
        pf.backbone_latency = num(p, "backbone_latency", 0);
        const iot_json *st = iot_json_get(p, "storage");
        if (!st || st->type != IOT_JSON_OBJECT)
            throw Fail("header: 'platform.storage' is missing");
        const iot_json *kind = iot_json_get(st, "kind");
        pf.storage = kind && kind->type == IOT_JSON_STRING ? kind->string : "";
        if (pf.storage != "local" && pf.storage != "lustre")
            throw Fail("header: platform.storage.kind must be 'local' or 'lustre'");
        pf.targets = std::max(1, (int)num(st, "osts", 1));
        pf.servers = (int)num(st, "oss", 0);
        pf.target_write_bw = num(st, "ost_write_bw", 0, true);
        pf.target_read_bw = num(st, "ost_read_bw", 0, true);
        pf.server_bw = num(st, "oss_bw", 0);
        pf.server_latency = num(st, "oss_latency", 0);
        pf.write_overhead = num(st, "write_overhead_s", 0);
        pf.read_overhead = num(st, "read_overhead_s", 0);
        if (pf.storage == "lustre" && (pf.servers < 1 || pf.server_bw <= 0))
            throw Fail("header: a lustre platform needs storage.oss >= 1 and storage.oss_bw > 0");
        if (in.nodes > 1 && (pf.nic_bw <= 0 || pf.backbone_bw <= 0))
            throw Fail("header: more than one node needs platform.nic_bw and platform.backbone_bw");
        if (pf.storage == "lustre" && (pf.nic_bw <= 0 || pf.backbone_bw <= 0))
            throw Fail("header: a lustre platform needs platform.nic_bw and platform.backbone_bw");
        if (pf.copy_bw <= 0 || pf.mem_bw <= 0 || pf.target_write_bw <= 0 || pf.target_read_bw <= 0)
            throw Fail("header: bandwidths must be > 0");
        const iot_json *lay = iot_json_get(doc, "layout");
        pf.stripe_size = (long long)num(lay, "stripe_size", 1 << 20);
        pf.stripe_count = (int)num(lay, "stripe_count", 1);
        pf.first_target = (int)num(lay, "first_ost", 0);
        const iot_json *fpp = lay ? iot_json_get(lay, "file_per_process") : nullptr;
        pf.per_process = fpp && fpp->type == IOT_JSON_BOOL && fpp->boolean;
        if (pf.stripe_size < 1 || pf.stripe_count < 1)
            throw Fail("header: layout.stripe_size and layout.stripe_count must be >= 1");
        if (pf.storage == "local")
            pf.stripe_count = 1, pf.targets = 1;
        pf.stripe_count = std::min(pf.stripe_count, pf.targets);
    } catch (...) {
        iot_json_free(doc);
        throw;
    }
    iot_json_free(doc);
}

/* the storage targets a file call's bytes land on: (target, bytes); with a file per process, Lustre's
   round-robin allocator starts each rank's file on the OSTs after the previous rank's */
void stripes(const Platform &pf, int rank, long long off, long long n, std::vector<std::pair<int, long long>> &out)
{
    out.clear();
    long long first = pf.first_target + (pf.per_process ? (long long)rank * pf.stripe_count : 0);
    while (n > 0) {
        long long in_stripe = pf.stripe_size - off % pf.stripe_size;
        long long take = std::min(n, in_stripe);
        int t = (int)((first + (off / pf.stripe_size) % pf.stripe_count) % pf.targets);
        auto it = std::find_if(out.begin(), out.end(), [t](const auto &p) { return p.first == t; });
        if (it == out.end())
            out.emplace_back(t, take);
        else
            it->second += take;
        off += take;
        n -= take;
    }
}

void read_events(std::istream &is, Input &in)
{
    std::string line;
    Phase *ph = nullptr;
    Segment *seg = nullptr;
    long lineno = 1;
    std::vector<std::pair<int, long long>> parts;
    auto rank_ok = [&](long long r) {
        if (r < 0 || r >= in.ranks)
            throw Fail("line " + std::to_string(lineno) + ": rank " + std::to_string(r) + " out of range");
    };
    while (std::getline(is, line)) {
        lineno++;
        if (line.empty())
            continue;
        const char *s = line.c_str();
        char kind = s[0];
        char *end = nullptr;
        const char *p = s + 1;
        long long a[3] = {0, 0, 0};
        int want = kind == 'P' ? 1 : kind == 'E' || kind == 'C' ? 0 : kind == WAITALL || kind == BUSY ? 2 : 3;
        for (int i = 0; i < want; i++) {
            a[i] = std::strtoll(p, &end, 10);
            if (end == p)
                throw Fail("line " + std::to_string(lineno) + ": expected " + std::to_string(want) + " numbers");
            p = end;
        }
        switch (kind) {
        case 'P':
            in.phases.emplace_back();
            ph = &in.phases.back();
            ph->segments.emplace_back();
            seg = &ph->segments.back();
            ph->target_bytes.assign(in.pf.targets, 0);
            break;
        case 'E':
            ph = nullptr, seg = nullptr;
            break;
        case 'C': {
            if (!seg)
                throw Fail("line " + std::to_string(lineno) + ": outside a phase");
            double t = std::strtod(p, &end);
            if (end == p || !std::isfinite(t) || t < 0)
                throw Fail("line " + std::to_string(lineno) + ": expected the collective's seconds");
            seg->collective_s += t;
            if (!seg->ops.empty()) { /* collectives with nothing between them are one */
                ph->segments.emplace_back();
                seg = &ph->segments.back();
            }
            break;
        }
        case ISEND:
        case IRECV:
        case WAITALL:
        case BUSY:
        case PWRITE:
        case PREAD:
            if (!seg)
                throw Fail("line " + std::to_string(lineno) + ": outside a phase");
            rank_ok(a[0]);
            if (kind == ISEND || kind == IRECV)
                rank_ok(a[2]);
            if (a[1] < 0 || a[2] < 0)
                throw Fail("line " + std::to_string(lineno) + ": negative size or offset");
            if (kind == WAITALL || kind == BUSY)
                seg->ops.push_back({kind, (int)a[0], 0, a[1]});
            else
                seg->ops.push_back({kind, (int)a[0], a[1], a[2]});
            if (kind == PWRITE || kind == PREAD) {
                (kind == PWRITE ? ph->written : ph->read) += a[1];
                stripes(in.pf, (int)a[0], a[2], a[1], parts);
                for (auto &pt : parts)
                    ph->target_bytes[pt.first] += pt.second;
            }
            break;
        default:
            throw Fail("line " + std::to_string(lineno) + ": unknown operation '" + std::string(1, kind) + "'");
        }
    }
    if (ph)
        throw Fail("the input ends inside a phase (no E line)");
    for (auto &phase : in.phases)
        for (auto &sg : phase.segments)
            std::stable_sort(sg.ops.begin(), sg.ops.end(), [](const Op &x, const Op &y) { return x.rank < y.rank; });
}

struct World {
    const Input *in;
    std::vector<sg4::Host *> node;
    std::vector<sg4::Host *> server;
    std::vector<sg4::Disk *> target;
    std::vector<sg4::Disk *> client; /* per node, when the platform limits its Lustre client */
    std::vector<sg4::Mailbox *> mbox;
    int per_node = 1;
    double cpu_share = 1; /* of a core, per rank */
    long long activities = 0;
    std::vector<double> phase_time;

    int node_of(int rank) const { return rank / per_node; }
};

World *world = nullptr;
int token = 0;

void build(const Input &in, World &w)
{
    const Platform &pf = in.pf;
    auto *zone = star_zone("cluster");
    const sg4::Link *backbone = nullptr;
    if (pf.backbone_bw > 0)
        backbone = add_link(zone, "backbone", pf.backbone_bw)->set_latency(pf.backbone_latency)->seal();
    w.per_node = (in.ranks + in.nodes - 1) / in.nodes;
    int used_nodes = (in.ranks + w.per_node - 1) / w.per_node;
    w.cpu_share = pf.busy_poll && w.per_node > pf.cores ? (double)pf.cores / w.per_node : 1.0;
    for (int k = 0; k < used_nodes; k++) {
        auto *h = add_host(zone, "node" + std::to_string(k), pf.core_speed)->set_core_count(pf.cores)->seal();
        const sg4::Link *mem = add_link(zone, "mem" + std::to_string(k), pf.mem_bw)->set_latency(pf.mem_latency)->seal();
        add_route(zone, h, h, {sg4::LinkInRoute(mem)}, false);
        if (backbone) {
            const sg4::Link *nic = add_duplex_link(zone, "nic" + std::to_string(k), pf.nic_bw)
                                       ->set_latency(pf.nic_latency)->seal();
            add_route(zone, h, nullptr,
                      {sg4::LinkInRoute(nic, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(backbone)}, true);
        }
        w.node.push_back(h);
    }
    if (pf.storage == "lustre") {
        for (int j = 0; j < pf.servers; j++) {
            auto *h = add_host(zone, "oss" + std::to_string(j), pf.core_speed)->seal();
            const sg4::Link *nic = add_duplex_link(zone, "ossnic" + std::to_string(j), pf.server_bw)
                                       ->set_latency(pf.server_latency)->seal();
            add_route(zone, h, nullptr,
                      {sg4::LinkInRoute(nic, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(backbone)}, true);
            w.server.push_back(h);
        }
        for (int i = 0; i < pf.targets; i++) /* consecutive OSTs on different OSSs, as Lustre allocates stripes */
            w.target.push_back(add_disk(w.server[i % pf.servers], "ost" + std::to_string(i), pf.target_read_bw,
                                        pf.target_write_bw)->seal());
        /* the node's file traffic shares its client's rate (RPCs in flight, dirty pages), its messages do not */
        if (pf.client_bw > 0)
            for (size_t k = 0; k < w.node.size(); k++)
                w.client.push_back(
                    add_disk(w.node[k], "client" + std::to_string(k), pf.client_bw, pf.client_bw)->seal());
    } else {
        w.target.push_back(add_disk(w.node[0], "fs", pf.target_read_bw, pf.target_write_bw)->seal());
    }
    zone->seal();
    for (int r = 0; r < in.ranks; r++)
        w.mbox.push_back(sg4::Mailbox::by_name("rank" + std::to_string(r)));
}

/* an Exec of `seconds` of one core's work, at the rank's share of that core */
sg4::ExecPtr busy(double seconds)
{
    const Platform &pf = world->in->pf;
    world->activities++;
    return sg4::this_actor::exec_init(seconds * pf.core_speed)->set_bound(pf.core_speed * world->cpu_share)->start();
}

/* `bytes` copied at `bw` bytes/s by one core */
sg4::ExecPtr copy(double bytes, double bw)
{
    return busy(bytes / bw);
}

void file_call(const Op &op)
{
    const Platform &pf = world->in->pf;
    bool writing = op.kind == PWRITE;
    double overhead = writing ? pf.write_overhead : pf.read_overhead;
    if (overhead > 0)
        sg4::this_actor::sleep_for(overhead);
    std::vector<std::pair<int, long long>> parts;
    stripes(pf, op.rank, op.arg, op.bytes, parts);
    std::vector<sg4::IoPtr> ios;
    std::vector<sg4::CommPtr> comms;
    sg4::Host *here = world->node[world->node_of(op.rank)];
    for (auto &pt : parts) {
        sg4::Disk *d = world->target[pt.first];
        ios.push_back(writing ? d->write_async(pt.second) : d->read_async(pt.second));
        world->activities++;
        if (pf.storage == "lustre") {
            sg4::Host *oss = world->server[pt.first % pf.servers];
            comms.push_back(writing ? sg4::Comm::sendto_async(here, oss, pt.second)
                                    : sg4::Comm::sendto_async(oss, here, pt.second));
            world->activities++;
        }
    }
    if (!world->client.empty()) {
        sg4::Disk *c = world->client[world->node_of(op.rank)];
        ios.push_back(writing ? c->write_async(op.bytes) : c->read_async(op.bytes));
        world->activities++;
    }
    double bw = writing ? pf.write_copy_bw : pf.read_copy_bw;
    sg4::ExecPtr cpu = bw > 0 ? copy((double)op.bytes, bw) : nullptr;
    for (auto &io : ios) /* all run at once: waiting for each in turn waits for the last */
        io->wait();
    if (!comms.empty())
        wait_all(comms);
    if (cpu)
        cpu->wait();
}

/* one rank's operations between two collectives */
void run_rank(const Op *begin, const Op *end)
{
    const Platform &pf = world->in->pf;
    std::vector<sg4::CommPtr> pending;
    std::vector<int *> slots;
    slots.reserve(end - begin);
    double copied = 0; /* intra-node bytes received since the last wait */
    int me = begin->rank;
    auto wait = [&]() {
        sg4::ExecPtr cpu = copied > 0 ? copy(copied, pf.copy_bw) : nullptr;
        if (!pending.empty())
            wait_all(pending);
        if (cpu)
            cpu->wait();
        pending.clear();
        copied = 0;
    };
    for (const Op *op = begin; op != end; op++) {
        switch (op->kind) {
        case ISEND:
            pending.push_back(world->mbox[op->arg]->put_async(&token, (uint64_t)op->bytes));
            world->activities++;
            break;
        case IRECV:
            slots.push_back(nullptr);
            pending.push_back(world->mbox[me]->get_async<int>(&slots.back()));
            if (world->node_of((int)op->arg) == world->node_of(me))
                copied += (double)op->bytes;
            break;
        case WAITALL:
            wait();
            break;
        case BUSY:
            busy((double)op->arg * 1e-9)->wait();
            break;
        default:
            file_call(*op);
        }
    }
    if (!pending.empty())
        wait();
}

void coordinator(World &w)
{
    for (const Phase &ph : w.in->phases) {
        double start = sg4::Engine::get_clock();
        for (const Segment &sg : ph.segments) {
            std::vector<sg4::ActorPtr> actors;
            for (size_t i = 0; i < sg.ops.size();) {
                size_t j = i;
                while (j < sg.ops.size() && sg.ops[j].rank == sg.ops[i].rank)
                    j++;
                const Op *b = sg.ops.data() + i, *e = sg.ops.data() + j;
                actors.push_back(add_actor("rank" + std::to_string(b->rank), w.node[w.node_of(b->rank)],
                                           [b, e]() { run_rank(b, e); }));
                i = j;
            }
            for (auto &a : actors)
                a->join();
            if (sg.collective_s > 0)
                sg4::this_actor::sleep_for(sg.collective_s);
        }
        w.phase_time.push_back(sg4::Engine::get_clock() - start);
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2 || !std::strcmp(argv[1], "--help")) {
        std::fprintf(stderr, "usage: %s INPUT|- [--cfg=SIMGRID-OPTION ...]  (see iotuner simulate; the input "
                             "format is described in the source)\n", argv[0]);
        return 2;
    }
    auto started = std::chrono::steady_clock::now();
    Input in;
    try {
        std::ifstream file;
        std::istream *is = &std::cin;
        if (std::strcmp(argv[1], "-") != 0) {
            file.open(argv[1]);
            if (!file)
                throw Fail(std::string("cannot read ") + argv[1]);
            is = &file;
        }
        std::string header;
        if (!std::getline(*is, header))
            throw Fail("empty input");
        read_header(header, in);
        read_events(*is, in);
    } catch (const Fail &e) {
        std::fprintf(stderr, "iotuner-iosim: %s\n", e.what());
        return 2;
    }
    /* an actor per rank and segment: small stacks, reused from the heap, instead of 8 MiB fresh mappings */
    static char small_stacks[] = "--cfg=contexts/stack-size:64", quiet[] = "--log=root.thresh:critical";
    std::vector<char *> sg_argv = {argv[0], small_stacks, quiet};
    for (int i = 2; i < argc; i++) /* SimGrid's own options (--cfg=...) follow the input */
        sg_argv.push_back(argv[i]);
    sg_argv.push_back(nullptr);
    int sg_argc = (int)sg_argv.size() - 1;
    sg4::Engine e(&sg_argc, sg_argv.data());
    xbt_log_control_set("root.thresh:critical");
    sg4::Engine::set_config("network/model:CM02");     /* flow-level sharing, no TCP correction factors */
    sg4::Engine::set_config("network/TCP-gamma:0");      /* no TCP window limit */
    sg4::Engine::set_config("network/crosstraffic:0");   /* no acknowledgements sharing the links */
    World w;
    w.in = &in;
    world = &w;
    build(in, w);
    add_actor("coordinator", w.node[0], [&w]() { coordinator(w); });
    e.run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("{\"phases\": [");
    for (size_t i = 0; i < in.phases.size(); i++) {
        const Phase &ph = in.phases[i];
        double t = w.phase_time[i];
        double coll = 0;
        for (const auto &sg : ph.segments)
            coll += sg.collective_s;
        long long mx = 0, sum = 0;
        int used = 0;
        for (size_t k = 0; k < ph.target_bytes.size(); k++) {
            mx = std::max(mx, ph.target_bytes[k]);
            sum += ph.target_bytes[k];
            used += ph.target_bytes[k] > 0;
        }
        std::printf("%s{\"time_s\": %.9g, \"collective_s\": %.9g, \"bytes_written\": %lld, \"bytes_read\": %lld, "
                    "\"targets_used\": %d, \"target_bytes_max\": %lld, \"target_bytes_mean\": %.9g}",
                    i ? ", " : "", t, coll, ph.written, ph.read, used, mx,
                    used ? (double)sum / used : 0.0);
    }
    std::printf("], \"activities\": %lld, \"wall_s\": %.3f}\n", w.activities, wall);
    return 0;
}
