#pragma once

#include "app-dashboard/core/forwarderlistmodel.h"

#include <QWidget>

namespace cloop::dashboard {

// What a forwarder's streams carried over the last minutes, as a picture:
// the bytes to the run as a filled line, those from it as a line, on one
// scale, with the latest rate of each (and a segment's frames) beside them
// in words, steps that dropped frames marked along the top, and the window,
// peaks and drops in the tooltip. The colours are the state chip's blue and amber,
// which stay apart for the colour-blind and stand 3:1 on the card.
class TrafficGraph final : public QWidget
{
    Q_OBJECT

public:
    explicit TrafficGraph(QWidget *parent = nullptr);

    void setHistory(const TrafficHistory &history);
    const TrafficHistory &history() const { return m_history; }
    // The legend's words: "1.2 MB/s to the run · 40 kB/s from the run".
    QString summary() const;
    // The tooltip's: the window, its steps, and the peak each way.
    QString details() const;

    // "1.2 MB/s", in the locale's digits.
    static QString describeRate(double bytesPerSecond, const QLocale &locale);
    // "830 frames/s", "2.5 URBs/s".
    static QString describeFrameRate(double perSecond, bool urbs, const QLocale &locale);
    // Whether the forwarder says its frames and drops (a segment's).
    bool countsFrames() const;
    // Frames dropped either way over the window.
    qint64 droppedInWindow() const;

    // Where the lines are drawn, and where step `step` of them is.
    QRectF plotArea() const;
    double xOfStep(qsizetype step) const;

    QColor toRunColor() const;
    QColor fromRunColor() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    double rateOf(qint64 bytes) const;
    QString windowWords() const; // "the last 10 min"
    QStringList legendLines() const;
    int legendWidth() const;

    TrafficHistory m_history;
};

} // namespace cloop::dashboard
