// Several metric sources served as one, every series with the same extra labels: a shard of a
// fleet (docs/scale.md) serves its families with `shard="NAME"`, so that a Prometheus scraping
// every shard (or federating them) tells them apart, and rules that sum by host and process
// aggregate across shards unchanged (each host is owned by one shard).
#pragma once

#include <prometheus/client_metric.h>
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <functional>
#include <memory>
#include <vector>

namespace waitpath {

class LabeledCollectable : public prometheus::Collectable {
 public:
  using Source = std::function<std::vector<prometheus::MetricFamily>()>;
  LabeledCollectable(std::vector<Source> sources,
                     std::vector<prometheus::ClientMetric::Label> labels)
      : sources_(std::move(sources)), labels_(std::move(labels)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    for (const Source& source : sources_) {
      for (prometheus::MetricFamily& family : source()) {
        for (prometheus::ClientMetric& m : family.metric) {
          m.label.insert(m.label.end(), labels_.begin(), labels_.end());
        }
        out.push_back(std::move(family));
      }
    }
    return out;
  }

 private:
  std::vector<Source> sources_;
  std::vector<prometheus::ClientMetric::Label> labels_;
};

}  // namespace waitpath
