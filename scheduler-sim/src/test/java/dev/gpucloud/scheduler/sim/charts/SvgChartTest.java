package dev.gpucloud.scheduler.sim.charts;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SvgChartTest {

    @Test
    void a_line_chart_has_its_title_legend_command_and_one_path_per_series() {
        String svg = new SvgChart("JCT <CDF>", "x", "y").add("fifo & co", new double[] {1, 10, 100},
                new double[] {0.1, 0.5, 1}).add("srtf", new double[] {1, 2}, new double[] {Double.NaN, 1}).logX()
                .command("./gpucloud simulate --trace t").render();
        assertThat(svg).startsWith("<?xml").endsWith("</svg>\n").contains("JCT &lt;CDF&gt;").contains("fifo &amp; co")
                .contains("./gpucloud simulate --trace t").contains("1e0").contains("1e2");
        assertThat(svg.split("<path", -1)).hasSize(3);
        assertThat(svg).doesNotContain("NaN");
    }

    @Test
    void a_bar_chart_labels_each_bar_with_its_value() {
        String svg = SvgChart.bars("cost", "USD", List.of("on-demand", "spot"), new double[] {100, 40}, "cmd");
        assertThat(svg).contains(">on-demand<").contains(">spot<").contains(">100<").contains(">40<");
        assertThat(svg.split("<rect", -1)).hasSize(4);
    }

    @Test
    void ticks_are_round_numbers() {
        assertThat(SvgChart.ticks(0, 1)).hasSize(6).startsWith(0.0).endsWith(1.0);
        assertThat(SvgChart.ticks(0, 1).stream().map(SvgChart::fmt)).containsExactly("0", "0.2", "0.4", "0.6", "0.8", "1");
        assertThat(SvgChart.ticks(0, 130)).containsExactly(0.0, 50.0, 100.0);
    }
}
