// SPDX-License-Identifier: GPL-2.0
/*
 * Drives the KernelShark plugin headlessly, the way KernelShark does but
 * without a display: libkshark opens a trace, the plugin is registered to
 * the stream, its event handlers run while the entries load, and then its
 * draw handler is called on task and CPU graphs built by libkshark-plot.
 * It prints what the plugin found and drew, a line per fact, for
 * tests/host/kernelshark-plugin.t to compare with what `trace-cmd report`
 * shows of the same trace: it works nothing out from the plugin's data.
 *
 * Usage: plugin_check TRACE.dat PLUGIN.so PID[,PID...] CPU
 *
 * Output (bins are the view's pixel columns, RANGES like 0-5,9-9):
 *   view NAME MIN MAX BIN_SIZE N_BINS      the time range of a view, ns
 *   task NAME PID COLOUR RANGES ...        bins the task's boxes cover
 *   marks NAME CPU in BINS out BINS        bins with a migration mark
 *   queue NAME CPU FIRST_BIN LEN,LEN,...   the queue line, as lengths
 *   shape FAIL WHAT                        a shape that should not be
 */
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "KsPlotTools.hpp"
#include "KsPlugins.hpp"
#include "libkshark-model.h"
#include "../../../plugins/kernelshark/sched_batch.h"

using namespace KsPlot;

static const char *const reason_names[] = { "picked", "signal", "pi", "policy", "other" };
static const int graph_height = 40;

/* The legend of the README: the colour of each kind of shape */
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

/* "0-5,9-9" for the bins in @bins, or "-" */
static std::string ranges(const std::set<int> &bins)
{
	std::string out;

	for (auto it = bins.begin(); it != bins.end();) {
		int first = *it, last = first;

		while (++it != bins.end() && *it == last + 1)
			last = *it;
		out += (out.empty() ? "" : ",") + std::to_string(first) + "-" + std::to_string(last);
	}
	return out.empty() ? "-" : out;
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

/* The bin of pixel column @x; -1 (and a complaint) outside the graph */
static int column(const Graph &graph, int x)
{
	int bin = x - graph.bin(0)._base.x();

	if (bin < 0 || bin >= graph.size()) {
		printf("shape FAIL a point at x %d is outside the graph\n", x);
		return -1;
	}
	return bin;
}

static void check_task(const char *view, kshark_data_stream *stream, kshark_trace_histo *histo,
		       int pid)
{
	ColorTable pids, cpus;
	Graph graph(histo, &pids, &cpus);
	std::map<std::string, std::set<int>> covered;

	graph.setHeight(graph_height);
	graph.fillTaskGraph(stream->stream_id, pid);
	for (PlotObject *obj : draw(stream, histo, &graph, pid, KSHARK_TASK_DRAW)) {
		Rectangle *box = dynamic_cast<Rectangle *>(obj);

		if (!box) {
			printf("shape FAIL a task graph shape that is not a box\n");
		} else if (box->pointX(0) != box->pointX(1) || box->pointX(2) != box->pointX(3) ||
			   box->pointX(3) <= box->pointX(0)) {
			printf("shape FAIL a box with no width or a slanted side\n");
		} else if (box->pointY(0) >= box->pointY(1) || box->pointY(1) > graph.base()) {
			printf("shape FAIL a box that is not above the graph's base\n");
		} else {
			/* Its right edge is the right edge of its last column */
			int first = column(graph, box->pointX(0));
			int last = column(graph, box->pointX(3) - 1);

			for (int b = first; b >= 0 && last >= 0 && b <= last; b++)
				covered[color_name(box->_color)].insert(b);
		}
		delete obj;
	}
	printf("task %s %d", view, pid);
	for (auto &c : covered)
		printf(" %s %s", c.first.c_str(), ranges(c.second).c_str());
	printf("\n");
}

static void check_cpu(const char *view, kshark_data_stream *stream, kshark_trace_histo *histo,
		      int cpu, int max_queue)
{
	ColorTable pids, cpus;
	Graph graph(histo, &pids, &cpus);
	std::set<int> in, out;
	std::string queue = "-";

	graph.setHeight(graph_height);
	graph.fillCPUGraph(stream->stream_id, cpu);
	for (PlotObject *obj : draw(stream, histo, &graph, cpu, KSHARK_CPU_DRAW)) {
		Shape *shape = dynamic_cast<Shape *>(obj);
		std::string color = color_name(obj->_color);

		if (dynamic_cast<Triangle *>(obj) && (color == "in" || color == "out")) {
			/* The middle point is the tip, over the migration's bin */
			(color == "in" ? in : out).insert(column(graph, shape->pointX(2)));
		} else if (dynamic_cast<Polyline *>(obj) && color == "queue" && queue == "-") {
			queue = std::to_string(column(graph, shape->pointX(0)));
			for (size_t i = 0; i < shape->pointCount(); i++) {
				int up = graph.base() - 1 - shape->pointY(i);

				/* Back from pixels: up = (height - 2) * len / max */
				queue += (i ? "," : " ") +
					 std::to_string((up * max_queue + graph_height - 3) /
							(graph_height - 2));
			}
		} else {
			printf("shape FAIL an unexpected shape in cpu %d's graph (%s)\n", cpu,
			       color.c_str());
		}
		delete obj;
	}
	printf("marks %s %d in %s out %s\n", view, cpu, ranges(in).c_str(), ranges(out).c_str());
	printf("queue %s %d %s\n", view, cpu, queue.c_str());
}

/* The counts the data part found, and the Info column of the first unpark */
static void print_data(plugin_sched_batch_context *ctx, const char *prefix)
{
	int64_t counts[SB_UNPARK_OTHER + 1] = { 0 };
	int before = 0, still = 0;

	for (size_t i = 0; i < ctx->nr_intervals; i++) {
		const sb_interval &iv = ctx->intervals[i];

		before += iv.start == INT64_MIN;
		if (iv.reason == SB_STILL_PARKED)
			still++;
		else
			counts[iv.reason]++;
	}
	printf("%sparks %zu\n%sunparks %zu\n%smigrations %zu\n", prefix, ctx->nr_parks, prefix,
	       ctx->nr_unparks, prefix, ctx->nr_migrations);
	printf("%sintervals %zu %d %d\n", prefix, ctx->nr_intervals, before, still);
	for (int r = 0; r <= SB_UNPARK_OTHER; r++)
		printf("%sreason %s %lld\n", prefix, reason_names[r], (long long)counts[r]);
	printf("%smax_queue %d\n", prefix, ctx->max_queue_len);
}

static void print_info(kshark_entry **rows, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		char *name = kshark_get_event_name(rows[i]), *info;
		bool unpark = name && !strcmp(name, "sched_batch/sched_batch_unpark");

		free(name);
		if (unpark) {
			info = kshark_get_info(rows[i]);
			printf("info %s\n", info ? info : "(none)");
			free(info);
			return;
		}
	}
}

static void free_rows(kshark_entry **rows, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++)
		free(rows[i]);
	free(rows);
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
	std::vector<int> pids;
	int sd, handlers = 0, cpu;
	int64_t first, span;
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
	for (kshark_draw_handler *h = stream->draw_handlers; h; h = h->next)
		handlers++;
	printf("entries %zd\ndraw_handlers %d\n", n, handlers);
	print_info(rows, n);

	/* The context, through the one symbol the plugin exports for this */
	so = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
	analysed = so ? (plugin_sched_batch_context *(*)(int))
			dlsym(so, "sched_batch_analysed_context") : nullptr;
	ctx = analysed ? analysed(sd) : nullptr;
	if (!ctx || n <= 0) {
		fprintf(stderr, "plugin_check: the plugin has no data for the trace\n");
		return 1;
	}
	print_data(ctx, "");

	/*
	 * Views of 800 bins: the whole trace, its middle third, and a tenth
	 * in the middle (which cuts through long intervals at both ends)
	 */
	first = rows[0]->ts;
	span = rows[n - 1]->ts - first;
	const struct { const char *name; int64_t min, max; } views[] = {
		{ "full", first, first + span },
		{ "third", first + span / 3, first + 2 * span / 3 },
		{ "tenth", first + span * 45 / 100, first + span * 55 / 100 },
	};
	ksmodel_init(&histo);
	for (auto &v : views) {
		ksmodel_set_bining(&histo, 800, v.min, v.max);
		ksmodel_fill(&histo, rows, n);
		printf("view %s %lld %lld %lld %d\n", v.name, (long long)histo.min,
		       (long long)histo.max, (long long)histo.bin_size, histo.n_bins);
		for (int pid : pids)
			check_task(v.name, stream, &histo, pid);
		check_cpu(v.name, stream, &histo, cpu, ctx->max_queue_len);
	}
	ksmodel_clear(&histo);

	/*
	 * KernelShark loads the entries again (new filters, plugins added)
	 * without re-initialising the plugin, after freeing the old ones: the
	 * plugin must start over, not add to or point into the freed load.
	 */
	free_rows(rows, n);
	n = kshark_load_entries(kctx, sd, &rows);
	ctx = analysed(sd);
	if (ctx)
		print_data(ctx, "reload ");
	free_rows(rows, n);
	kshark_free(kctx);
	return 0;
}
