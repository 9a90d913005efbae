#pragma once

#include <QFrame>
#include <QPersistentModelIndex>

class QLabel;
class QPushButton;

namespace cloop::dashboard {

class ElidedLabel;
class StateChip;
class TrafficGraph;

// One forwarder as a card: what it carries, its state as a chip, who holds
// it until when, what its streams carried lately, what its last Test said and when, and its
// actions, each saying why when it cannot be used. It renders one model row and asks for actions by
// signal; it decides nothing. Every state keeps the same layout: a Test result replaces the line it
// has, it never grows the card.
class ForwarderCard final : public QFrame
{
    Q_OBJECT

public:
    explicit ForwarderCard(const QPersistentModelIndex &index, QWidget *parent = nullptr);

    qint64 forwarderId() const { return m_forwarderId; }
    // Re-reads the row (after dataChanged).
    void refresh();

    QPushButton *bindButton() const { return m_bindButton; }
    QPushButton *unbindButton() const { return m_unbindButton; }
    QPushButton *testButton() const { return m_testButton; }
    QPushButton *revokeButton() const { return m_revokeButton; }
    QPushButton *reenrollButton() const { return m_reenrollButton; }
    StateChip *stateChip() const { return m_state; }
    // Shown while the forwarder is connected.
    TrafficGraph *trafficGraph() const { return m_traffic; }
    QString stateText() const;
    QString bindingText() const;
    // The Test line as shown in full: its mark, time and report's first line.
    QString testText() const;
    // Whether the last Test passed; none while untested or testing.
    std::optional<bool> testPassed() const;

Q_SIGNALS:
    void bindRequested(qint64 forwarderId);
    void unbindRequested(qint64 forwarderId);
    void testRequested(qint64 forwarderId);
    void revokeRequested(qint64 forwarderId);
    void reenrollRequested(qint64 forwarderId);

private:
    void refreshState(const QModelIndex &row);
    void refreshBinding(const QModelIndex &row, bool revoked);
    void refreshTest(const QModelIndex &row);
    void refreshTraffic(const QModelIndex &row);
    void refreshActions(const QModelIndex &row);

    QPersistentModelIndex m_index;
    qint64 m_forwarderId = 0;
    QLabel *m_kindIcon;
    QLabel *m_nameLabel;
    QLabel *m_idLabel;
    StateChip *m_state;
    QLabel *m_deviceLabel;
    // Who holds it, and until when: one line each, never wrapped, so the
    // card's height does not depend on how its width settles.
    ElidedLabel *m_bindingLabel;
    ElidedLabel *m_bindingEndLabel;
    TrafficGraph *m_traffic;
    QLabel *m_testMark;
    ElidedLabel *m_testLabel;
    QWidget *m_actions;
    QPushButton *m_bindButton;
    QPushButton *m_unbindButton;
    QPushButton *m_testButton;
    QPushButton *m_reenrollButton;
    QPushButton *m_revokeButton;
    std::optional<bool> m_testPassed;
};

} // namespace cloop::dashboard
