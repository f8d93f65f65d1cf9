// SPDX-License-Identifier: LGPL-2.1
/*
 * KernelShark plugin for the sched_batch trace events: the draw part.
 *
 * Task graphs: every parked interval is a box from park to unpark in the
 * lower part of the graph, filled in the colour of the reason it ended
 * (picked to run, signal, PI, policy change, other), and an empty box
 * when the task was still parked when the trace ended.
 *
 * CPU graphs: a line of the CPU's idle-batch queue length (0 at the base,
 * the trace's longest queue at the top), and a triangle for every batch
 * balancer migration: pointing down at the top edge for a task that came
 * in, pointing up at the bottom edge for one that left.
 */
#include <cmath>
#include <limits>
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

/* A parked interval in a task graph */
class ParkedBox : public Rectangle {
public:
	ParkedBox(const sb_interval &iv) : _interval(iv) {}

	const sb_interval _interval;

	/* Inside the box is a hit, so KernelShark's tooltip finds it */
	double distance(int x, int y) const override
	{
		if (x >= pointX(0) && x <= pointX(3) && y >= pointY(0) && y <= pointY(1))
			return 0;
		return std::numeric_limits<double>::max();
	}
};

/* A balancer migration in a CPU graph */
class MigrationMark : public Triangle {
public:
	MigrationMark(const sb_migration &m, bool in) : _migration(m), _in(in) {}

	const sb_migration _migration;
	const bool _in;		/* into this CPU (else out of it) */
};

/* The CPU's queue length across the graph */
class QueueLine : public Polyline {
public:
	QueueLine(size_t n, int cpu) : Polyline(n), _cpu(cpu) {}

	const int _cpu;
};

/* The graph's bin of @e; before or after the visible range: the first or last */
static int clamp_bin(kshark_trace_histo *histo, const kshark_entry *e, int first, int last)
{
	int bin;

	if (!e)
		return first;
	bin = ksmodel_get_bin(histo, e);
	if (bin == LOWER_OVERFLOW_BIN)
		return first;
	if (bin == UPPER_OVERFLOW_BIN)
		return last;
	return bin;
}

/* Does @e lie after (> 0) or before (< 0) the visible range? */
static int outside(kshark_trace_histo *histo, const kshark_entry *e)
{
	if (!e)
		return 0;
	if (e->ts > histo->max)
		return 1;
	return e->ts < histo->min ? -1 : 0;
}

static void draw_parked(plugin_sched_batch_context *ctx, KsCppArgV *argv, int pid)
{
	Graph *graph = argv->_graph;
	int last = graph->size() - 1, height = graph->height() * .4;

	for (size_t i = 0; i < ctx->nr_intervals; i++) {
		const sb_interval &iv = ctx->intervals[i];
		ParkedBox *box;
		Point a, b;

		if (iv.pid != pid || outside(argv->_histo, iv.park) > 0 ||
		    (iv.unpark && outside(argv->_histo, iv.unpark) < 0))
			continue;
		a = graph->bin(clamp_bin(argv->_histo, iv.park, 0, last))._base;
		b = graph->bin(iv.unpark ? clamp_bin(argv->_histo, iv.unpark, 0, last) : last)._base;
		box = new ParkedBox(iv);
		box->setPoint(0, a.x(), a.y() - height);
		box->setPoint(1, a.x(), a.y() - 1);
		box->setPoint(2, b.x(), b.y() - 1);
		box->setPoint(3, b.x(), b.y() - height);
		box->setFill(iv.reason != SB_STILL_PARKED);
		box->_color = reason_color(iv.reason);
		box->_size = 1;
		argv->_shapes->push_front(box);
	}
}

static void draw_migrations(plugin_sched_batch_context *ctx, KsCppArgV *argv, int cpu)
{
	Graph *graph = argv->_graph;
	int top = graph->height() - 1, size = 5;

	for (size_t i = 0; i < ctx->nr_migrations; i++) {
		const sb_migration &m = ctx->migrations[i];
		int bin = ksmodel_get_bin(argv->_histo, m.entry);

		if (bin < 0 || (m.src_cpu != cpu && m.dst_cpu != cpu))
			continue;
		for (int in = 0; in < 2; in++) {
			MigrationMark *mark;
			Point p = graph->bin(bin)._base;

			if ((in ? m.dst_cpu : m.src_cpu) != cpu)
				continue;
			mark = new MigrationMark(m, in);
			if (in) {	/* from the top edge, pointing down */
				mark->setPoint(0, p.x() - size, p.y() - top);
				mark->setPoint(1, p.x() + size, p.y() - top);
				mark->setPoint(2, p.x(), p.y() - top + size * 2);
				mark->_color = Color(0, 160, 0);
			} else {	/* from the base, pointing up */
				mark->setPoint(0, p.x() - size, p.y());
				mark->setPoint(1, p.x() + size, p.y());
				mark->setPoint(2, p.x(), p.y() - size * 2);
				mark->_color = Color(230, 120, 0);
			}
			mark->setFill(true);
			argv->_shapes->push_front(mark);
		}
	}
}

static void draw_queue(plugin_sched_batch_context *ctx, KsCppArgV *argv, int cpu)
{
	Graph *graph = argv->_graph;
	kshark_trace_histo *histo = argv->_histo;
	int nbins = graph->size(), height = graph->height() - 2;
	std::vector<int> len(nbins, -1);
	int carry = -1, first = -1;
	QueueLine *line;

	if (ctx->max_queue_len <= 0)
		return;
	/* The length at the end of each bin; before the range: the carry */
	for (size_t i = 0; i < ctx->nr_queue; i++) {
		const sb_queue_point &q = ctx->queue[i];
		int bin;

		if (q.cpu != cpu)
			continue;
		bin = ksmodel_get_bin(histo, q.entry);
		if (bin == LOWER_OVERFLOW_BIN)
			carry = q.len;
		else if (bin >= 0)
			len[bin] = q.len;
	}
	for (int b = 0; b < nbins; b++) {
		if (len[b] < 0)
			len[b] = carry;
		carry = len[b];
		if (first < 0 && len[b] >= 0)
			first = b;
	}
	if (first < 0)
		return;		/* not known anywhere in the range */
	line = new QueueLine(nbins - first, cpu);
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
