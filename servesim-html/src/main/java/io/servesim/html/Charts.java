package io.servesim.html;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.geom.Rectangle2D;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYBarRenderer;
import org.jfree.chart.renderer.xy.XYItemRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

/** Chart builders that render JFreeChart charts to inline SVG elements, with Locale.ROOT axis numbers. */
final class Charts {
    static final int WIDTH = 1180;
    static final int HEIGHT = 380;
    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e), new Color(0x9467bd)
    };
    private static final DecimalFormat NUMBER =
            new DecimalFormat("#,##0.###", DecimalFormatSymbols.getInstance(Locale.ROOT));

    private Charts() {}

    /** A named series of (x, y) points. */
    @SuppressWarnings("ArrayRecordComponent") // plotting data, never compared
    record Line(String name, double[] x, double[] y) {}

    /** The chart as an {@code <svg>} element with a stable id (no random ids: the report is reproducible). */
    static String svg(JFreeChart chart, String id) {
        chart.setBackgroundPaint(Color.WHITE);
        chart.getTitle().setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        SVGGraphics2D g = new SVGGraphics2D(WIDTH, HEIGHT);
        g.setDefsKeyPrefix(id + "-");
        chart.draw(g, new Rectangle2D.Double(0, 0, WIDTH, HEIGHT));
        // a viewBox lets the page scale the chart to its width (readable from 1,280 px down to a laptop)
        return g.getSVGElement(id, true, new org.jfree.svg.ViewBox(0, 0, WIDTH, HEIGHT), null, null);
    }

    /** Line chart of several series. */
    static JFreeChart lines(String title, String xLabel, String yLabel, List<Line> lines) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (Line l : lines) {
            XYSeries s = new XYSeries(l.name(), false, true);
            for (int i = 0; i < l.x().length; i++) {
                s.add(l.x()[i], l.y()[i], false);
            }
            data.addSeries(s);
        }
        JFreeChart c = ChartFactory.createXYLineChart(
                title, xLabel, yLabel, data, PlotOrientation.VERTICAL, lines.size() > 1, false, false);
        style(c.getXYPlot());
        return c;
    }

    /** Empirical CDFs (x = value, y = share of requests at or below it) of several samples. */
    static JFreeChart cdf(String title, String xLabel, List<String> names, List<double[]> samples) {
        List<Line> lines = new java.util.ArrayList<>();
        for (int k = 0; k < names.size(); k++) {
            double[] v = samples.get(k).clone();
            Arrays.sort(v);
            int points = Math.min(v.length, 400); // enough for a smooth curve at 1,180 px
            double[] x = new double[points];
            double[] y = new double[points];
            for (int i = 0; i < points; i++) {
                int idx = points == v.length ? i : (int) Math.round((double) i * (v.length - 1) / (points - 1));
                x[i] = v[idx];
                y[i] = (idx + 1.0) / v.length;
            }
            lines.add(new Line(names.get(k), x, y));
        }
        JFreeChart c = lines(title, xLabel, "share of requests ≤ x", lines);
        ((NumberAxis) c.getXYPlot().getRangeAxis()).setRange(0, 1.0);
        c.getXYPlot().getRenderer().setDefaultStroke(new BasicStroke(2f));
        return c;
    }

    /** Scatter plot of several point sets. */
    static JFreeChart scatter(String title, String xLabel, String yLabel, List<Line> sets) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (Line l : sets) {
            XYSeries s = new XYSeries(l.name(), false, true);
            for (int i = 0; i < l.x().length; i++) {
                s.add(l.x()[i], l.y()[i], false);
            }
            data.addSeries(s);
        }
        JFreeChart c = ChartFactory.createScatterPlot(
                title, xLabel, yLabel, data, PlotOrientation.VERTICAL, true, false, false);
        style(c.getXYPlot());
        return c;
    }

    /** Bars at x positions (one per worker). */
    static JFreeChart bars(String title, String xLabel, String yLabel, double[] values) {
        XYSeries s = new XYSeries(yLabel, false, true);
        for (int i = 0; i < values.length; i++) {
            s.add(i, values[i], false);
        }
        JFreeChart c = ChartFactory.createXYBarChart(
                title, xLabel, false, yLabel, new XYSeriesCollection(s), PlotOrientation.VERTICAL, false, false, false);
        XYPlot p = c.getXYPlot();
        style(p);
        XYBarRenderer r = (XYBarRenderer) p.getRenderer();
        r.setShadowVisible(false);
        r.setBarPainter(new org.jfree.chart.renderer.xy.StandardXYBarPainter());
        r.setSeriesPaint(0, PALETTE[0]);
        r.setMargin(values.length > 200 ? 0 : 0.1);
        return c;
    }

    /** One bar per category. */
    static JFreeChart categories(String title, String yLabel, List<String> names, double[] values) {
        DefaultCategoryDataset d = new DefaultCategoryDataset();
        for (int i = 0; i < names.size(); i++) {
            d.addValue(values[i], yLabel, names.get(i));
        }
        JFreeChart c = ChartFactory.createBarChart(title, "", yLabel, d, PlotOrientation.VERTICAL, false, false, false);
        CategoryPlot p = c.getCategoryPlot();
        p.setBackgroundPaint(Color.WHITE);
        p.setRangeGridlinePaint(new Color(0xdddddd));
        ((NumberAxis) p.getRangeAxis()).setNumberFormatOverride(NUMBER);
        CategoryAxis a = p.getDomainAxis();
        a.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        BarRenderer r = (BarRenderer) p.getRenderer();
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        r.setSeriesPaint(0, PALETTE[0]);
        r.setMaximumBarWidth(0.15);
        return c;
    }

    private static void style(XYPlot p) {
        p.setBackgroundPaint(Color.WHITE);
        p.setDomainGridlinePaint(new Color(0xdddddd));
        p.setRangeGridlinePaint(new Color(0xdddddd));
        ((NumberAxis) p.getRangeAxis()).setNumberFormatOverride(NUMBER);
        if (p.getDomainAxis() instanceof NumberAxis x) {
            x.setNumberFormatOverride(NUMBER);
            x.setAutoRangeIncludesZero(false);
        }
        XYItemRenderer r = p.getRenderer();
        for (int i = 0; i < PALETTE.length; i++) {
            r.setSeriesPaint(i, PALETTE[i]);
            r.setSeriesStroke(i, new BasicStroke(1.8f));
        }
    }
}
