#pragma once
// A small line chart as standalone SVG text, for the studies' result pages (no plotting
// library is needed to view it: any browser opens it).
#include <string>
#include <utility>
#include <vector>

namespace stepgen {

/// One named line: y values at the chart's x positions.
using PlotSeries = std::pair<std::string, std::vector<double>>;

/// Line chart of `series` over the x values `xs` (same length as every series), linear axes
/// from 0 to the largest value, a legend, axis labels and the title (plain text: no XML
/// markup characters). Deterministic text.
/// Throws std::invalid_argument when a series does not have one value per x.
std::string svgLinePlot(const std::string& title, const std::string& xLabel, const std::string& yLabel,
                        const std::vector<double>& xs, const std::vector<PlotSeries>& series);

}  // namespace stepgen
