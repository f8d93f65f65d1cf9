// SPDX-License-Identifier: GPL-2.0
/*
 * Drives the KernelShark plugin headlessly, the way KernelShark does but
 * without a display: libkshark opens a trace, the plugin is registered to
 * the stream, its event handlers run while the entries load, and then its
 * draw handler is called on task and CPU graphs built by libkshark-plot.
 * It prints what the plugin found and drew, a line per fact, for
 * tests/host/kernelshark-plugin.t to compare with `trace-cmd report`;
 * it checks the geometry of the shapes itself and prints "geometry ok" or
 * what is wrong.
 *
 * Usage: plugin_check TRACE.dat PLUGIN.so PID[,PID...] CPU
 */
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "KsPlotTools.hpp"
#include "KsPlugins.hpp"
#include "libkshark-model.h"
#include "../../../plugins/kernelshark/sched_batch.h"

using namespace KsPlot;

static const char *const reason_names[] = { "picked", "signal", "pi", "policy", "other" };
static int failures;

static const char *reason_name(int reason)
{
	return reason == SB_STILL_PARKED ? "still_parked" : reason_names[reason];
}

/* The legend of the README: the colour of each reason */
static std::string color_name(const Color &c)
{
	static const std::map<int, std::string> names = {
		{ 0x009688, "picked" }, { 0xdc322f, "signal" }, { 0x9400d3, "pi" },
		{ 0x268bd2, "policy" }, { 0x5a5a5a, "other" }, { 0x969696, "still_parked" },
		{ 0x00a000, "in" }, { 0xe67800, "out" }, { 0x1e3cc8, "queue" },
	};
	auto it = names.find(c.r() << 16 | c.g() << 8 | c.b());

	return it == names.end() ? "unknown" : it->second;
}

static void fail(const char *what)
{
	printf("geometry FAIL: %s\n", what);
	failures++;
}

/* Run every draw handler of the stream on @graph; the shapes it added */
static PlotObjList draw(kshark_data_stream *stream, kshark_trace_histo *histo, Graph *graph,
			int val, int action)
{
	PlotObjList shapes;
	KsCppArgV argv = { histo, graph, &shapes };

	for (kshark_draw_handler *h = stream->draw_handlers; h; h = h->next)
		h->draw_func(argv.toC(), stream->stream_id, val, action);
	return shapes;
}

static int bin_of(kshark_trace_histo *histo, const kshark_entry *e, int last)
{
	int bin;

	if (!e)
		return 0;
	bin = ksmodel_get_bin(histo, e);
	return bin == LOWER_OVERFLOW_BIN ? 0 : bin == UPPER_OVERFLOW_BIN ? last : bin;
}

/*
 * The task graph of @pid over the model's range: one filled box per
 * parked interval that overlaps the range, in the reason's colour, from
 * the park's bin to the unpark's (clamped to the range).
 */
static void check_task(const char *label, kshark_data_stream *stream, kshark_trace_histo *histo,
		       plugin_sched_batch_context *ctx, int pid)
{
	ColorTable pids, cpus;
	Graph graph(histo, &pids, &cpus);
	std::multimap<std::pair<int, int>, std::string> want, got;
	std::map<std::string, int> by_color;
	int last = graph.size() - 1, boxes = 0;

	graph.setHeight(40);
	graph.fillTaskGraph(stream->stream_id, pid);
	for (size_t i = 0; i < ctx->nr_intervals; i++) {
		const sb_interval &iv = ctx->intervals[i];

		if (iv.pid != pid || (iv.park && iv.park->ts > histo->max) ||
		    (iv.unpark && iv.unpark->ts < histo->min))
			continue;
		want.emplace(std::make_pair(graph.bin(bin_of(histo, iv.park, last))._base.x(),
					    graph.bin(iv.unpark ? bin_of(histo, iv.unpark, last)
							       : last)._base.x()),
			     reason_name(iv.reason));
	}
	for (PlotObject *obj : draw(stream, histo, &graph, pid, KSHARK_TASK_DRAW)) {
		Rectangle *box = dynamic_cast<Rectangle *>(obj);

		if (!box) {
			fail("a task graph shape that is not a box");
		} else {
			boxes++;
			by_color[color_name(box->_color)]++;
			got.emplace(std::make_pair(box->pointX(0), box->pointX(3)),
				    color_name(box->_color));
			if (box->pointY(0) >= box->pointY(1) || box->pointY(1) > graph.base())
				fail("a box that is not above the graph's base");
		}
		delete obj;
	}
	printf("%s pid %d window %lld %lld boxes %d", label, pid, (long long)histo->min,
	       (long long)histo->max, boxes);
	for (auto &c : by_color)
		printf(" %s %d", c.first.c_str(), c.second);
	printf("\n");
	if (want != got)
		fail("the boxes are not where the parked intervals are");
}

/* The CPU graph: a triangle per migration in or out, and the queue line */
static void check_cpu(kshark_data_stream *stream, kshark_trace_histo *histo,
		      int cpu)
{
	ColorTable pids, cpus;
	Graph graph(histo, &pids, &cpus);
	int in = 0, out = 0, lines = 0, other = 0, top = 0, base;

	graph.setHeight(40);
	graph.fillCPUGraph(stream->stream_id, cpu);
	base = graph.base();
	for (PlotObject *obj : draw(stream, histo, &graph, cpu, KSHARK_CPU_DRAW)) {
		Shape *shape = dynamic_cast<Shape *>(obj);
		std::string color = color_name(obj->_color);

		if (dynamic_cast<Triangle *>(obj) && color == "in") {
			in++;
		} else if (dynamic_cast<Triangle *>(obj) && color == "out") {
			out++;
		} else if (dynamic_cast<Polyline *>(obj) && color == "queue") {
			lines++;
			/* The longest queue of the whole trace reaches the top */
			for (size_t i = 0; i < shape->pointCount(); i++) {
				if (shape->pointY(i) > base || shape->pointY(i) < base - 40)
					fail("the queue line leaves its graph");
				if (base - shape->pointY(i) > top)
					top = base - shape->pointY(i);
			}
		} else {
			other++;
		}
		delete obj;
	}
	printf("cpu %d migrations in %d out %d queue_lines %d queue_top %d other %d\n",
	       cpu, in, out, lines, top, other);
}

int main(int argc, char **argv)
{
	kshark_context *kctx = nullptr;
	kshark_entry **rows = nullptr;
	kshark_trace_histo histo;
	kshark_plugin_list *plugin;
	kshark_data_stream *stream;
	plugin_sched_batch_context *(*analysed)(int);
	plugin_sched_batch_context *ctx;
	int64_t span, counts[SB_UNPARK_OTHER + 1] = { 0 };
	int sd, handlers = 0, before = 0, still = 0, cpu;
	std::vector<int> pids;
	ssize_t n;
	void *so;

	if (argc != 5) {
		fprintf(stderr, "usage: %s TRACE.dat PLUGIN.so PID[,PID...] CPU\n", argv[0]);
		return 2;
	}
	for (char *p = argv[3]; *p; p += *p == ',')
		pids.push_back((int)strtol(p, &p, 10));
	cpu = atoi(argv[4]);
	if (!kshark_instance(&kctx) || (sd = kshark_open(kctx, argv[1])) < 0) {
		fprintf(stderr, "plugin_check: cannot open %s\n", argv[1]);
		return 1;
	}
	stream = kshark_get_data_stream(kctx, sd);
	plugin = kshark_register_plugin(kctx, "sched_batch", argv[2]);
	if (!stream || !plugin || !plugin->process_interface) {
		fprintf(stderr, "plugin_check: cannot load the plugin %s\n", argv[2]);
		return 1;
	}
	kshark_register_plugin_to_stream(stream, plugin->process_interface, true);
	printf("init %d\n", kshark_handle_all_dpis(stream, KSHARK_PLUGIN_INIT));
	n = kshark_load_entries(kctx, sd, &rows);
	printf("entries %zd\n", n);
	for (kshark_draw_handler *h = stream->draw_handlers; h; h = h->next)
		handlers++;
	printf("draw_handlers %d\n", handlers);
	/* The Info column of the first unpark: libtraceevent's plugin prints it */
	for (ssize_t i = 0; i < n; i++) {
		char *name = kshark_get_event_name(rows[i]), *info;

		if (name && !strcmp(name, "sched_batch/sched_batch_unpark")) {
			info = kshark_get_info(rows[i]);
			printf("info %s\n", info ? info : "(none)");
			free(info);
			free(name);
			break;
		}
		free(name);
	}

	/* The context, through the one symbol the plugin exports for this */
	so = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	analysed = so ? (plugin_sched_batch_context *(*)(int))
			dlsym(so, "sched_batch_analysed_context") : nullptr;
	ctx = analysed ? analysed(sd) : nullptr;
	if (!ctx || n <= 0) {
		fprintf(stderr, "plugin_check: the plugin has no data for the trace\n");
		return 1;
	}
	for (size_t i = 0; i < ctx->nr_intervals; i++) {
		const sb_interval &iv = ctx->intervals[i];

		before += !iv.park;
		if (iv.reason == SB_STILL_PARKED)
			still++;
		else
			counts[iv.reason]++;
	}
	printf("parks %zu\nunparks %zu\nmigrations %zu\n", ctx->nr_parks, ctx->nr_unparks,
	       ctx->nr_migrations);
	printf("intervals %zu\nbefore_start %d\nstill_parked %d\n", ctx->nr_intervals, before, still);
	for (int r = 0; r <= SB_UNPARK_OTHER; r++)
		printf("reason %s %lld\n", reason_names[r], (long long)counts[r]);
	printf("max_queue %d\n", ctx->max_queue_len);

	/* The whole trace, then its middle third, at 800 bins */
	ksmodel_init(&histo);
	ksmodel_set_bining(&histo, 800, rows[0]->ts, rows[n - 1]->ts);
	ksmodel_fill(&histo, rows, n);
	for (int pid : pids)
		check_task("task", stream, &histo, ctx, pid);
	check_cpu(stream, &histo, cpu);
	span = rows[n - 1]->ts - rows[0]->ts;
	ksmodel_set_bining(&histo, 800, rows[0]->ts + span / 3, rows[0]->ts + 2 * span / 3);
	ksmodel_fill(&histo, rows, n);
	for (int pid : pids)
		check_task("zoom", stream, &histo, ctx, pid);

	if (!failures)
		printf("geometry ok\n");
	ksmodel_clear(&histo);
	for (ssize_t i = 0; i < n; i++)
		free(rows[i]);
	free(rows);
	kshark_free(kctx);
	return failures ? 1 : 0;
}
