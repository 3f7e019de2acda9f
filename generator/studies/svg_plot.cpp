// svgLinePlot: a line chart written as SVG text.
#include "studies/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace stepgen {

std::string svgLinePlot(const std::string& title, const std::string& xLabel, const std::string& yLabel,
                        const std::vector<double>& xs, const std::vector<PlotSeries>& series) {
  constexpr double W = 640, H = 400, L = 70, R = 170, T = 40, B = 50;
  static const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  double xmax = 0, ymax = 0;
  for (double x : xs) xmax = std::max(xmax, x);
  for (const auto& [name, ys] : series) {
    if (ys.size() != xs.size()) throw std::invalid_argument("plot series '" + name + "' needs one value per x");
    for (double y : ys) ymax = std::max(ymax, y);
  }
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  auto px = [&](double x) { return L + (W - L - R) * x / xmax; };
  auto py = [&](double y) { return H - B - (H - T - B) * y / ymax; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"Helvetica\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"24\" font-size=\"15\">{}</text>\n",
      W, H, L, title);
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", L, H - B, W - R);
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", L, H - B, T);
  for (int k = 0; k <= 4; ++k) {
    const double y = ymax * k / 4;
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}</text>\n", L - 6, py(y) + 4, y);
  }
  for (double x : xs) s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", px(x), H - B + 18, x);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2, H - 10, xLabel);
  s += fmt::format("<text x=\"16\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {})\">{}</text>\n",
                   (T + H - B) / 2, (T + H - B) / 2, yLabel);
  for (size_t i = 0; i < series.size(); ++i) {
    const char* c = colours[i % (sizeof colours / sizeof colours[0])];
    std::string pts;
    for (size_t k = 0; k < xs.size(); ++k) pts += fmt::format("{}{:.1f},{:.1f}", k ? " " : "", px(xs[k]), py(series[i].second[k]));
    s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", pts, c);
    for (size_t k = 0; k < xs.size(); ++k)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(xs[k]), py(series[i].second[k]), c);
    const double ly = T + 10 + 20 * double(i);
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>\n", W - R + 15, ly,
                     W - R + 40, c);
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", W - R + 46, ly + 4, series[i].first);
  }
  return s + "</svg>\n";
}

}  // namespace stepgen
