// SPDX-License-Identifier: LGPL-2.1
/*
 * KernelShark plugin for the sched_batch trace events: the draw part.
 *
 * Task graphs: every parked interval is a box from park to unpark in the
 * upper part of the graph, filled in the colour of the reason it ended
 * (picked to run, signal, PI, policy change, other), and an empty box
 * when the task was still parked when the trace ended.  Intervals of one
 * reason that meet in the view's bins are drawn as one box.
 *
 * CPU graphs: a line of the CPU's idle-batch queue length (0 at the base,
 * the trace's longest queue at the top), and a triangle for the batch
 * balancer's migrations in each bin: pointing down at the top edge for
 * tasks that came in, pointing up at the bottom edge for ones that left.
 *
 * Bins are worked out from the view's time range here: ksmodel_get_bin()
 * of libkshark 2.2.1 returns UPPER_OVERFLOW_BIN for times before the view
 * and LOWER_OVERFLOW_BIN for times after it, the other way round from
 * what its header says.
 */
#include <algorithm>
#include <vector>

#include "KsPlotTools.hpp"
#include "KsPlugins.hpp"
#include "sched_batch.h"

using namespace KsPlot;

/* The colour of a parked interval that ended for @reason */
static Color reason_color(int reason)
{
	switch (reason) {
	case SB_UNPARK_PICKED:
		return Color(0, 150, 136);	/* teal: the CPU had idle time */
	case SB_UNPARK_SIGNAL:
		return Color(220, 50, 47);	/* red */
	case SB_UNPARK_PI:
		return Color(148, 0, 211);	/* purple */
	case SB_UNPARK_POLICY:
		return Color(38, 139, 210);	/* blue */
	case SB_STILL_PARKED:
		return Color(150, 150, 150);	/* grey, not filled */
	default:
		return Color(90, 90, 90);	/* dark grey: unknown or lost */
	}
}

/* The view's bin of time @ts: -1 before the view, n_bins after it */
static int view_bin(const kshark_trace_histo *histo, int64_t ts)
{
	if (ts < histo->min)
		return -1;
	if (ts > histo->max)
		return histo->n_bins;
	/* The last bin also holds max itself */
	return std::min<int64_t>((ts - histo->min) / histo->bin_size, histo->n_bins - 1);
}

/*
 * A box over bins @first..@last (each bin is a pixel column: the box ends
 * at the right edge of @last, so a park and unpark in one bin still show)
 */
static void add_box(KsCppArgV *argv, int first, int last, int reason)
{
	Graph *graph = argv->_graph;
	int top = graph->height() * .85, bottom = graph->height() * .45;
	Point a = graph->bin(first)._base, b = graph->bin(last)._base;
	Rectangle *box = new Rectangle;

	/* Above the task's own bars, so neither hides the other's colour */
	box->setPoint(0, a.x(), a.y() - top);
	box->setPoint(1, a.x(), a.y() - bottom);
	box->setPoint(2, b.x() + 1, b.y() - bottom);
	box->setPoint(3, b.x() + 1, b.y() - top);
	box->setFill(reason != SB_STILL_PARKED);
	box->_color = reason_color(reason);
	box->_size = 1;
	argv->_shapes->push_front(box);
}

/*
 * The task's parked intervals that overlap the view, found by binary
 * search (the intervals are sorted by task, then time, and a task's do
 * not overlap).  Intervals of one reason that touch in the view's bins
 * become one box, so a long zoomed-out trace draws at most a box per bin.
 */
static void draw_parked(plugin_sched_batch_context *ctx, KsCppArgV *argv, int pid)
{
	kshark_trace_histo *histo = argv->_histo;
	const sb_interval *iv = std::lower_bound(ctx->intervals, ctx->intervals + ctx->nr_intervals,
						 pid, [histo](const sb_interval &x, int p) {
		return x.pid < p || (x.pid == p && x.end < histo->min);
	});
	const sb_interval *stop = ctx->intervals + ctx->nr_intervals;
	int first = -1, last = -1, reason = 0, n = histo->n_bins;

	for (; iv < stop && iv->pid == pid && iv->start <= histo->max; iv++) {
		int b0 = std::max(view_bin(histo, iv->start), 0);
		int b1 = std::min(view_bin(histo, iv->end), n - 1);

		if (first >= 0 && iv->reason == reason && b0 <= last + 1) {
			last = std::max(last, b1);
			continue;
		}
		if (first >= 0)
			add_box(argv, first, last, reason);
		first = b0;
		last = b1;
		reason = iv->reason;
	}
	if (first >= 0)
		add_box(argv, first, last, reason);
}

/* Where @cpu's sorted run of @arr starts at time @from or later */
template<class T> static const T *seek(const T *arr, size_t n, int cpu, int64_t from)
{
	return std::lower_bound(arr, arr + n, cpu, [from](const T &x, int c) {
		return x.cpu < c || (x.cpu == c && x.ts < from);
	});
}

/* A triangle per bin with a migration into (down, at the top) or out of the CPU */
static void draw_migrations(plugin_sched_batch_context *ctx, KsCppArgV *argv, int cpu)
{
	kshark_trace_histo *histo = argv->_histo;
	Graph *graph = argv->_graph;
	const sb_migration_end *e = seek(ctx->ends, ctx->nr_ends, cpu, histo->min);
	const sb_migration_end *stop = ctx->ends + ctx->nr_ends;
	std::vector<uint8_t> marked(histo->n_bins, 0);
	int top = graph->height() - 1, size = 5;

	for (; e < stop && e->cpu == cpu && e->ts <= histo->max; e++) {
		int bin = view_bin(histo, e->ts);
		uint8_t bit = e->in ? 1 : 2;
		Point p = graph->bin(bin)._base;
		Triangle *mark;

		if (marked[bin] & bit)
			continue;
		marked[bin] |= bit;
		mark = new Triangle;
		if (e->in) {
			mark->setPoint(0, p.x() - size, p.y() - top);
			mark->setPoint(1, p.x() + size, p.y() - top);
			mark->setPoint(2, p.x(), p.y() - top + size * 2);
			mark->_color = Color(0, 160, 0);
		} else {
			mark->setPoint(0, p.x() - size, p.y());
			mark->setPoint(1, p.x() + size, p.y());
			mark->setPoint(2, p.x(), p.y() - size * 2);
			mark->_color = Color(230, 120, 0);
		}
		mark->setFill(true);
		argv->_shapes->push_front(mark);
	}
}

/* The CPU's queue length at the end of each bin, as one line */
static void draw_queue(plugin_sched_batch_context *ctx, KsCppArgV *argv, int cpu)
{
	kshark_trace_histo *histo = argv->_histo;
	Graph *graph = argv->_graph;
	const sb_queue_point *q = seek(ctx->queue, ctx->nr_queue, cpu, histo->min);
	const sb_queue_point *stop = ctx->queue + ctx->nr_queue;
	int nbins = histo->n_bins, height = graph->height() - 2, first = -1;
	std::vector<int> len(nbins, -1);
	int carry = -1;
	Polyline *line;

	if (ctx->max_queue_len <= 0)
		return;
	/* The length when the view begins: the CPU's last point before it */
	if (q > ctx->queue && q[-1].cpu == cpu)
		carry = q[-1].len;
	for (; q < stop && q->cpu == cpu && q->ts <= histo->max; q++)
		len[view_bin(histo, q->ts)] = q->len;
	for (int b = 0; b < nbins; b++) {
		if (len[b] < 0)
			len[b] = carry;
		carry = len[b];
		if (first < 0 && len[b] >= 0)
			first = b;
	}
	if (first < 0)
		return;		/* not known anywhere in the view */
	line = new Polyline(nbins - first);
	for (int b = first; b < nbins; b++) {
		Point p = graph->bin(b)._base;

		line->setPoint(b - first, p.x(), p.y() - 1 - height * len[b] / ctx->max_queue_len);
	}
	line->_color = Color(30, 60, 200);
	line->_size = 1;
	argv->_shapes->push_front(line);
}

/* KernelShark's draw handler: @val is a PID or a CPU, after @draw_action */
void sched_batch_draw(kshark_cpp_argv *argv_c, int sd, int val, int draw_action)
{
	plugin_sched_batch_context *ctx = sched_batch_analysed_context(sd);
	KsCppArgV *argv = KS_ARGV_TO_CPP(argv_c);

	if (!ctx || !argv->_graph || argv->_graph->size() == 0)
		return;
	if (draw_action & KSHARK_TASK_DRAW) {
		draw_parked(ctx, argv, val);
	} else if (draw_action & KSHARK_CPU_DRAW) {
		draw_queue(ctx, argv, val);
		draw_migrations(ctx, argv, val);
	}
}
