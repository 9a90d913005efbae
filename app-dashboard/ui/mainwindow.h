#pragma once

#include "common/api/adminrequest.h"

#include <QJsonObject>
#include <QMainWindow>

class QLabel;
class QListWidget;
class QStackedWidget;

namespace cloop::dashboard {

class EventStream;
class ForwarderDirectory;
class ForwardersPage;
class HubApi;

// The signed-in window: navigation on the left, the chosen screen on the
// right, who is signed in and whether the view is live in the status bar.
class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    MainWindow(HubApi *api, const QJsonObject &identity, QWidget *parent = nullptr);
    ~MainWindow() override;

    ForwardersPage *forwardersPage() const { return m_forwarders; }
    ForwarderDirectory *directory() const { return m_directory; }
    QLabel *liveLabel() const { return m_live; }

Q_SIGNALS:
    void signOutRequested();

private:
    HubApi *m_api;
    EventStream *m_events;
    ForwarderDirectory *m_directory;
    QListWidget *m_navigation;
    QStackedWidget *m_pages;
    ForwardersPage *m_forwarders;
    QLabel *m_live;
};

} // namespace cloop::dashboard
