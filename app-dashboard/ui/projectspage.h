#pragma once

#include "common/api/identity.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace cloop::dashboard {

class EventSubscription;
class ForwardersClient;
class HubApi;
class JsonListing;
class RecordTable;

// Projects → Overview → Forwarded devices: the projects the user sees and,
// for the chosen one, what is bound to it. An administrator of the project
// binds and unbinds; a maintainer requests.
class ProjectsPage final : public QWidget
{
    Q_OBJECT

public:
    ProjectsPage(HubApi *api, EventSubscription *events, ForwardersClient *forwarders,
        const api::Identity &identity, QWidget *parent = nullptr);

    RecordTable *projects() const { return m_projects; }
    RecordTable *devices() const { return m_devices; }
    QPushButton *bindButton() const { return m_bind; }
    QPushButton *requestButton() const { return m_request; }
    QPushButton *unbindButton() const { return m_unbind; }
    QString currentProject() const { return m_project; }
    // "administrator", "maintainer" or empty, from the signed-in identity.
    QString roleIn(const QString &project) const;
    std::optional<api::ProjectRole> roleOf(const QString &project) const;

Q_SIGNALS:
    void dialogOpened(QDialog *dialog);

private:
    void showProject(const QString &path);
    void openBinding(bool request);
    void openUnbind();

    ForwardersClient *m_forwarders;
    api::Identity m_identity;
    JsonListing *m_projectListing;
    JsonListing *m_deviceListing;
    RecordTable *m_projects;
    RecordTable *m_devices;
    QLabel *m_overview;
    QPushButton *m_bind;
    QPushButton *m_request;
    QPushButton *m_unbind;
    QString m_project;
};

} // namespace cloop::dashboard
